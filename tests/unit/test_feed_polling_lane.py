"""An engine from before the ledger (change_feed: false) is polled through its source list,
under knowledge_auto_study, and every receipt it is sent is labelled synthesized."""

from __future__ import annotations

from knowledge_service.models import AutoStudy, KnowledgeSettings, RevisionStudy
from knowledge_service.runtime import Runtime
from local_engine.double import Double
from tests.conftest import Api

NO_FEED = {
    "instance_id": "fgi_00000001",
    "generation": "gen_01",
    "change_feed": False,
    "exports": {"anthill": {"package_version": 7}},
}


def settings(forager: Double, auto: AutoStudy) -> KnowledgeSettings:
    # revision study off: only the poll lane could act, and it is the one under test
    return KnowledgeSettings(
        knowledge_enabled=True,
        knowledge_forager_endpoint=forager.url,
        knowledge_auto_study=auto,
        knowledge_revision_study=RevisionStudy.OFF,
    )


def test_an_engine_without_a_feed_is_polled_and_every_receipt_is_synthesized(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    forager.set_capabilities(NO_FEED)
    knowledge_on.config.save_settings(settings(forager, AutoStudy.SUGGEST))
    answer = api.call("POST", "/knowledge/feed/sync", query={"project": "falcon"})
    assert answer.status == 200, answer.raw
    data = answer.body["data"]
    assert (data["change_feed"], data["synthesized"]) == (False, True)
    assert data["findings"] == len(
        forager.state.store.rows("SELECT 1 FROM sources WHERE ref = 'falcon'")
    )  # every source is new to the colony
    receipts = forager.feed_receipts("falcon")
    assert len(receipts) == data["receipts"] == data["findings"]
    assert all(r["synthesized"] for r in receipts)
    assert not [r for r in forager.requests if "/feed?" in r["path"] or r["path"].endswith("/feed")]


def test_the_poll_lane_follows_auto_study_not_the_revision_setting(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    forager.set_capabilities(NO_FEED)
    knowledge_on.config.save_settings(settings(forager, AutoStudy.OFF))
    answer = api.call("POST", "/knowledge/feed/sync", query={"project": "falcon"})
    # neither lane would act (the poll is off, revisions are off): refused outright, naming both
    assert (answer.status, answer.body["code"]) == (409, "conflict"), answer.raw
    assert "knowledge_auto_study" in answer.body["message"]
    assert "knowledge_revision_study" in answer.body["message"]
    assert forager.feed_receipts("falcon") == []


def test_with_the_poll_on_and_revisions_off_an_engine_without_a_feed_still_studies(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    forager.set_capabilities(NO_FEED)
    knowledge_on.config.save_settings(settings(forager, AutoStudy.ON))
    data = api.call("POST", "/knowledge/feed/sync", query={"project": "falcon"}).body["data"]
    assert data["synthesized"] is True
    assert len(data["mission_ids"]) == data["findings"] > 0  # on: each finding queued as a mission
