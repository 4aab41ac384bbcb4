"""The exports routes: history, start, one export, and the archive verified into S3 by the export
verifier in the background (the first download asks for it and answers 409 at once)."""

from __future__ import annotations

import hashlib
import itertools
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest

from knowledge_service.domain import exports as domain
from knowledge_service.errors import UpstreamError, UpstreamRefused
from knowledge_service.identity.principal import Permission, ProjectRole
from knowledge_service.runtime import Runtime, reset_runtime, runtime
from knowledge_service.storage.archives import VERIFICATION_PK, archive_key
from knowledge_service.upstream.client import ForagerClient
from local_engine.double import Double
from local_engine.exports import jobs as sim_exports
from tests.conftest import TEMPLATE, Api, principal
from tests.export_verifier import ExportVerifier

OWNER = principal("olive", Permission.READ_KNOWLEDGE, owns=frozenset({"colony"}))
VIEWER = principal("vic", Permission.READ_KNOWLEDGE, roles={"falcon": ProjectRole.VIEWER})
OPERATOR = principal("opal", Permission.READ_KNOWLEDGE, roles={"falcon": ProjectRole.OPERATOR})


@pytest.fixture
def book(forager: Double) -> sim_exports.ExportBook:
    exports = sim_exports.book(forager.state)
    exports.build_seconds = 0.0
    return exports


def start(api: Api, body: Any = None, who: Any = OPERATOR, headers: dict[str, str] | None = None) -> Any:
    return api.call(
        "POST",
        "/knowledge/exports",
        who,
        body=body if body is not None else {"format": "jsonl"},
        query={"project": "falcon"},
        headers=headers,
    )


def download(api: Api, export_id: str, who: Any = OPERATOR) -> Any:
    return api.call(
        "GET",
        f"/knowledge/exports/{export_id}/download",
        who,
        query={"project": "falcon"},
        resource="/knowledge/exports/{id}/download",
    )


def completed(api: Api, **options: Any) -> str:
    """An export started and read until FORAGER says it is built (its archive is made in the background)."""
    answer = start(api, {"format": "obsidian", "options": options} if options else None)
    assert answer.status == 200, answer.body
    export_id = str(answer.body["data"]["export_id"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        read = api.call("GET", f"/knowledge/exports/{export_id}", OPERATOR, query={"project": "falcon"},
                        resource="/knowledge/exports/{id}")  # fmt: skip
        if read.body["data"]["status"] != "running":
            assert read.body["data"]["status"] == "completed", read.body
            return export_id
        time.sleep(0.01)
    raise AssertionError(f"the export {export_id} was not built in time")


def s3_keys(rt: Runtime) -> list[str]:
    listing = boto3.client("s3").list_objects_v2(Bucket=rt.env.archive_bucket)
    return [o["Key"] for o in listing.get("Contents", [])]


# ---------------------------------------------------------------- history, start, one
def test_start_answers_the_running_export_and_passes_the_idempotency_key(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    answer = start(api, {"format": "obsidian", "options": {"vault_name": "Harbour", "include_chunks": False}},
                   headers={"Idempotency-Key": "export-once-1"})  # fmt: skip
    assert answer.status == 200, answer.body
    row = answer.body["data"]
    assert (row["status"], row["format"], row["project_ref"]) == ("running", "obsidian", "falcon")
    sent = forager.requests[-1]
    assert sent["idempotency_key"] == "export-once-1"
    assert sent["body"] == {"format": "obsidian", "options": {"vault_name": "Harbour", "include_chunks": False}}
    again = start(api, {"format": "obsidian", "options": {"vault_name": "Harbour", "include_chunks": False}},
                  headers={"Idempotency-Key": "export-once-1"})  # fmt: skip
    assert again.body["data"]["export_id"] == row["export_id"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"format": "pdf"}, "format"),
        ({"format": "jsonl", "options": {"vault_name": "x" * 81}}, "options.vault_name"),
        ({"format": "jsonl", "options": {"include_sources": "yes"}}, "options.include_sources"),
        ({"format": "jsonl", "options": {"includeSources": True}}, "options.includeSources"),
        ({"format": "jsonl", "extra": 1}, "extra"),
    ],
)
def test_start_refuses_what_forager_does_not_take_naming_the_field(
    api: Api, knowledge_on: Runtime, forager: Double, body: dict[str, Any], field: str
) -> None:
    before = len(forager.requests)
    answer = start(api, body)
    assert (answer.status, answer.body["code"]) == (400, "bad_request")
    assert answer.body["message"].startswith(f"{field}:")
    assert len(forager.requests) == before


def test_vault_name_of_eighty_characters_is_taken(api: Api, knowledge_on: Runtime) -> None:
    assert start(api, {"format": "anthill", "options": {"vault_name": "v" * 80}}).status == 200


def test_forager_409_while_processing_is_relayed_in_its_words(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook
) -> None:
    book.processing.add("falcon")
    answer = start(api)
    assert (answer.status, answer.body["code"]) == (409, "conflict")
    assert "being processed" in answer.body["message"]


def test_history_lists_the_bases_exports_newest_first_for_a_role_less_owner(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook
) -> None:
    first, second = completed(api), completed(api)
    answer = api.call("GET", "/knowledge/exports", OWNER, query={"project": "falcon"})
    assert answer.status == 200, answer.body
    ids = [row["export_id"] for row in answer.body["data"]["exports"]]
    assert ids[:2] == [second, first]
    row = answer.body["data"]["exports"][0]
    assert row["downloadable"] is True and len(row["sha256"]) == 64


def test_one_export_of_another_base_is_not_found_in_the_same_words(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook
) -> None:
    other = book.start("harbour", "jsonl", {}).export_id
    ours = completed(api)
    answers = [
        api.call("GET", f"/knowledge/exports/{i}", OPERATOR, query={"project": "falcon"},
                 resource="/knowledge/exports/{id}")
        for i in (other, "exp_" + "0" * 16, ours)
    ]  # fmt: skip
    assert [a.status for a in answers] == [404, 404, 200]
    assert answers[0].body["message"] == answers[1].body["message"]
    assert download(api, other).status == 404


def test_an_id_that_is_not_an_export_id_is_400_before_forager_is_asked(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    before = len(forager.requests)
    answer = download(api, "exp_NOT-HEX")
    assert (answer.status, answer.body["code"]) == (400, "bad_request")
    assert len(forager.requests) == before


# ---------------------------------------------------------------- the archive
class Clock:
    """The product clock moved by hand (``DEVSTACK_CLOCK_FILE``, as the local stack moves it)."""

    def __init__(self, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.path = path
        self.offset = 0
        path.write_text("0\n")
        monkeypatch.setenv("DEVSTACK_CLOCK_FILE", str(path))
        reset_runtime()

    def move(self, seconds: int) -> None:
        self.offset += seconds
        self.path.write_text(f"{self.offset}\n")


@pytest.fixture
def clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, knowledge_on: Runtime) -> Clock:
    return Clock(tmp_path / "clock", monkeypatch)


def archive_requests(forager: Double) -> list[dict[str, Any]]:
    return [r for r in forager.requests if r["path"].endswith("/download")]


def verified(api: Api, verifier: ExportVerifier, export_id: str, who: Any = OPERATOR) -> Any:
    """The first download asks (409), the verifier receives the archive, the next download answers."""
    first = download(api, export_id, who)
    assert (first.status, first.body["code"]) == (409, "not_ready"), first.body
    verifier.deliver()
    return download(api, export_id, who)


def test_the_first_download_answers_409_not_ready_at_once_and_asks_the_verifier_once(
    api: Api, knowledge_on: Runtime, forager: Double, book: sim_exports.ExportBook, export_verifier: ExportVerifier
) -> None:
    export_id = completed(api)
    answers = [download(api, export_id) for _ in range(3)]  # a caller polling within the window
    for answer in answers:
        assert (answer.status, answer.body["code"]) == (409, "not_ready"), answer.body
        assert answer.headers["Retry-After"] == "5"
        assert "Location" not in answer.headers
    (event,) = export_verifier.take()
    assert event["source"] == "knowledge-service.exports"
    assert event["detail-type"] == "knowledge.export.verification_requested"
    assert event["detail"] == {"export_id": export_id, "project": "falcon", "knowledge_base": "falcon",
                               "requester": "opal"}  # fmt: skip
    assert archive_requests(forager) == [] and book.get(export_id).served_bytes == 0
    assert s3_keys(knowledge_on) == []


def test_a_request_no_verifier_settled_is_asked_again_after_its_window(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, export_verifier: ExportVerifier, clock: Clock
) -> None:
    export_id = completed(api)
    assert download(api, export_id).status == 409
    assert len(export_verifier.take()) == 1  # taken, never delivered: as if its retries were spent
    clock.move(domain.REQUEST_WINDOW_SECONDS - 1)
    assert download(api, export_id).status == 409
    assert export_verifier.take() == []
    clock.move(2)
    assert download(api, export_id).status == 409
    assert len(export_verifier.take()) == 1


def test_an_event_the_bus_refuses_is_a_500_and_the_next_download_asks_again(
    api: Api,
    knowledge_on: Runtime,
    book: sim_exports.ExportBook,
    export_verifier: ExportVerifier,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    export_id = completed(api)
    bus = runtime().archives._events  # the store's own EventBridge client

    def refused(**_: Any) -> dict[str, Any]:
        return {"FailedEntryCount": 1, "Entries": [{"ErrorCode": "InternalFailure", "ErrorMessage": "try again"}]}

    with monkeypatch.context() as patched:
        patched.setattr(bus, "put_events", refused)
        answer = download(api, export_id)
    assert (answer.status, answer.body["code"]) == (500, "internal"), answer.body
    assert "could not be asked" in answer.body["message"]
    assert download(api, export_id).status == 409  # the request row was taken back: asked now
    assert len(export_verifier.take()) == 1


def test_a_two_gib_archives_first_download_answers_at_once_having_read_none_of_it(
    api: Api, knowledge_on: Runtime, forager: Double, book: sim_exports.ExportBook, export_verifier: ExportVerifier
) -> None:
    export_id = completed(api)
    recorded = book.get(export_id)  # what FORAGER recorded for 2 GiB (none built here: the bytes are never read)
    recorded.size, recorded.sha256 = 2 * 1024**3, "ab" * 32
    started = time.monotonic()
    answer = download(api, export_id)
    elapsed = time.monotonic() - started
    assert (answer.status, answer.body["code"]) == (409, "not_ready")
    assert elapsed < 5.0  # the request budget is API Gateway's 29 s; nothing here depends on the size
    assert archive_requests(forager) == [] and book.get(export_id).served_bytes == 0
    assert len(export_verifier.take()) == 1


def test_the_verifier_receives_the_archive_and_the_next_download_hands_it_over_by_presigned_url(
    api: Api, knowledge_on: Runtime, forager: Double, book: sim_exports.ExportBook, export_verifier: ExportVerifier
) -> None:
    export_id = completed(api, vault_name='Harbour / Q3 "final"')
    row = book.get(export_id).to_json()
    assert download(api, export_id).status == 409
    assert export_verifier.deliver() == [{"export_id": export_id, "outcome": "verified"}]
    answer = download(api, export_id)
    assert answer.status == 303, answer.body
    assert answer.headers["X-Export-Sha256"] == row["sha256"]
    assert answer.headers["Cache-Control"] == "no-store"
    location = answer.headers["Location"]
    assert answer.body["data"]["url"] == location
    assert answer.body["data"]["file_name"] == f"HarbourQ3finalexport{export_id[4:12]}.zip"
    params = parse_qs(urlsplit(location).query)
    assert params["response-content-disposition"] == [
        f'attachment; filename="HarbourQ3finalexport{export_id[4:12]}.zip"'
    ]
    key = archive_key(export_id, row["sha256"])
    assert s3_keys(knowledge_on) == [key]
    body = boto3.client("s3").get_object(Bucket=knowledge_on.env.archive_bucket, Key=key)["Body"].read()
    assert len(body) == row["size_bytes"] and hashlib.sha256(body).hexdigest() == row["sha256"]
    assert export_verifier.take() == []  # handed over: nothing asked again


def test_the_consoles_script_is_answered_the_hand_over_itself_and_one_event_is_recorded(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, export_verifier: ExportVerifier
) -> None:
    """A page's script cannot read a redirect, so the console's request (its header) is answered
    200 with the envelope: it goes to the URL itself, and one click is one hand-over, one event."""
    export_id = completed(api)
    assert verified(api, export_verifier, export_id).status == 303
    before = len(knowledge_on.events.recent("knowledge_export_downloaded"))
    answer = api.call(
        "GET",
        f"/knowledge/exports/{export_id}/download",
        OPERATOR,
        query={"project": "falcon"},
        resource="/knowledge/exports/{id}/download",
        headers={"X-Knowledge-Console": "1"},
    )
    assert answer.status == 200, answer.body
    assert "Location" not in answer.headers
    assert (
        answer.body["data"]["url"].startswith("http")
        and answer.headers["X-Export-Sha256"] == answer.body["data"]["sha256"]
    )
    assert len(knowledge_on.events.recent("knowledge_export_downloaded")) == before + 1


def test_a_second_download_does_not_fetch_the_archive_again(
    api: Api, knowledge_on: Runtime, forager: Double, book: sim_exports.ExportBook, export_verifier: ExportVerifier
) -> None:
    export_id = completed(api)
    assert verified(api, export_verifier, export_id).status == 303
    fetched = archive_requests(forager)
    assert download(api, export_id).status == 303
    assert archive_requests(forager) == fetched
    assert len(fetched) == 1
    assert export_verifier.take() == []


def test_a_large_archive_travels_as_several_parts_and_verifies(
    api: Api,
    knowledge_on: Runtime,
    book: sim_exports.ExportBook,
    export_verifier: ExportVerifier,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(domain, "PART_BYTES", 5 * 1024 * 1024)
    book.padding_bytes = 11 * 1024 * 1024 + 17  # the control port's stored padding: a real archive that large
    export_id = completed(api)
    assert verified(api, export_verifier, export_id).status == 303
    export = book.get(export_id)
    head = boto3.client("s3").head_object(Bucket=knowledge_on.env.archive_bucket,
                                          Key=archive_key(export_id, str(export.sha256)))  # fmt: skip
    assert head["ContentLength"] == export.size and export.size > book.padding_bytes
    assert head["ETag"].endswith('-3"')  # three parts


def test_a_running_export_is_409_not_ready_with_retry_after_and_asks_nothing(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, export_verifier: ExportVerifier
) -> None:
    book.build_seconds = 60
    answer = download(api, str(start(api).body["data"]["export_id"]))
    assert (answer.status, answer.body["code"]) == (409, "not_ready")
    assert answer.headers["Retry-After"] == "5"
    assert export_verifier.take() == []


def test_a_verifier_that_finds_the_lease_held_leaves_the_archive_to_its_holder(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, forager: Double, export_verifier: ExportVerifier
) -> None:
    export_id = completed(api)
    assert knowledge_on.archives.claim(export_id, "another-verifier", 900)
    answer = download(api, export_id)
    assert (answer.status, answer.body["code"], answer.headers["Retry-After"]) == (409, "not_ready", "5")
    assert export_verifier.deliver() == [{"export_id": export_id, "outcome": "being_verified"}]
    assert archive_requests(forager) == []
    assert download(api, export_id).status == 409


def test_written_to_folder_is_409_and_an_expired_archive_is_410_gone(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, export_verifier: ExportVerifier
) -> None:
    folder, expired = completed(api), completed(api)
    book.get(folder).written_to_folder = True
    book.get(expired).archive_expired_at = "2026-10-01T00:00:00Z"
    to_folder, gone = download(api, folder), download(api, expired)
    assert (to_folder.status, to_folder.body["code"]) == (409, "written_to_folder")
    assert (gone.status, gone.body["code"]) == (410, "gone")
    assert export_verifier.take() == []


def test_an_expired_archive_is_410_gone_and_the_colonys_verified_copy_goes_with_it(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, export_verifier: ExportVerifier
) -> None:
    export_id = completed(api)
    assert verified(api, export_verifier, export_id).status == 303
    assert s3_keys(knowledge_on) == [archive_key(export_id, book.get(export_id).to_json()["sha256"])]
    book.get(export_id).archive_expired_at = "2026-10-01T00:00:00Z"
    gone = download(api, export_id)
    assert (gone.status, gone.body["code"]) == (410, "gone")
    assert s3_keys(knowledge_on) == []


@pytest.mark.parametrize("upstream", [410, 404], ids=["forager-410", "forager-404"])
def test_an_archive_forager_says_is_gone_when_the_verifier_asks_is_410_for_the_next_download(
    api: Api,
    knowledge_on: Runtime,
    book: sim_exports.ExportBook,
    export_verifier: ExportVerifier,
    monkeypatch: pytest.MonkeyPatch,
    upstream: int,
) -> None:
    """FORAGER's 404 for the archive is read as gone as its 410 is (issue 39's survivor)."""
    export_id = completed(api)
    assert download(api, export_id).status == 409

    def gone(self: ForagerClient, export_id: str) -> Any:
        raise UpstreamRefused(upstream, "archive_expired", "This export's archive is no longer kept.")

    monkeypatch.setattr(ForagerClient, "download_archive", gone)
    assert export_verifier.deliver() == [{"export_id": export_id, "outcome": "gone"}]
    answer = download(api, export_id)
    assert (answer.status, answer.body["code"]) == (410, "gone")
    assert export_verifier.take() == [] and knowledge_on.archives.open_uploads() == []


def test_every_verified_copy_expires_by_the_buckets_own_rule() -> None:
    """A copy nobody asks for again still goes: the bucket expires exports/ after ArchiveCopyDays."""
    bucket = TEMPLATE.resources["ArchiveBucket"]["Properties"]
    rules = {rule["Id"]: rule for rule in bucket["LifecycleConfiguration"]["Rules"]}
    rule = rules["export-archive-copies-expire"]
    assert (rule["Status"], rule["Prefix"], rule["ExpirationInDays"]) == (
        "Enabled",
        "exports/",
        {"Ref": "ArchiveCopyDays"},
    )
    assert archive_key("exp_1", "ab").startswith(rule["Prefix"])
    assert TEMPLATE.body["Parameters"]["ArchiveCopyDays"]["Default"] == 7


@pytest.mark.parametrize(
    ("who", "status"),
    [(OWNER, 403), (VIEWER, 403), (OPERATOR, 303), (principal("ada", Permission.READ_KNOWLEDGE,
                                                                roles={"falcon": ProjectRole.ADMIN}), 303)],
    ids=["role-less-owner", "viewer", "operator", "admin"],
)  # fmt: skip
def test_the_archive_takes_the_projects_operator_or_admin(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, export_verifier: ExportVerifier, who: Any,
    status: int,
) -> None:  # fmt: skip
    export_id = completed(api)
    assert verified(api, export_verifier, export_id).status == 303
    assert download(api, export_id, who).status == status
    assert api.call("GET", "/knowledge/exports", who, query={"project": "falcon"}).status == 200


def test_a_caller_without_the_standing_asks_for_no_verification(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, export_verifier: ExportVerifier
) -> None:
    export_id = completed(api)
    assert [download(api, export_id, who).status for who in (OWNER, VIEWER)] == [403, 403]
    assert export_verifier.take() == []


def test_exports_are_never_gated_a_lapsed_subscription_takes_away_what_it_has(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, export_verifier: ExportVerifier
) -> None:
    from knowledge_service.models import Subscription, SubscriptionRecord

    knowledge_on.config.save_subscription(SubscriptionRecord(state=Subscription.LAPSED), "test")
    knowledge_on.subscriptions.forget()
    assert verified(api, export_verifier, completed(api)).status == 303


def test_start_and_download_leave_event_log_rows_with_digest_and_size(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, export_verifier: ExportVerifier
) -> None:
    export_id = completed(api)
    assert verified(api, export_verifier, export_id).status == 303
    started = knowledge_on.events.recent("knowledge_export_started")[0]
    taken = knowledge_on.events.recent("knowledge_export_downloaded")
    assert len(taken) == 1  # the 409 that asked for the verification handed nothing over
    row = book.get(export_id).to_json()
    assert (started.actor, started.payload["record"], started.payload["project"]) == ("opal", export_id, "falcon")
    assert taken[0].payload["sha256"] == row["sha256"]
    assert int(taken[0].payload["size_bytes"]) == row["size_bytes"]
    assert taken[0].payload["knowledge_base"] == "falcon"


# ---------------------------------------------------------------- a hundred corruptions
KINDS = ("corrupt", "truncate", "extend", "wrong_digest", "wrong_record")


def test_a_corrupted_archive_through_the_verifier_is_502_for_the_next_download_and_nothing_is_kept(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, export_verifier: ExportVerifier, clock: Clock
) -> None:
    export_id = completed(api)
    book.get(export_id).faults.append("corrupt")
    sha256 = str(book.get(export_id).to_json()["sha256"])
    assert download(api, export_id).status == 409
    assert export_verifier.deliver() == [{"export_id": export_id, "outcome": "mismatch"}]
    for _ in range(2):  # every download while the failure stands answers it; none asks again
        answer = download(api, export_id)
        assert (answer.status, answer.body["code"]) == (502, "upstream_mismatch"), answer.body
        assert "SHA-256" in answer.body["message"] and "Location" not in answer.headers
    assert export_verifier.take() == []
    assert knowledge_on.archives.size_of(archive_key(export_id, sha256)) is None
    assert knowledge_on.archives.open_uploads() == [] and s3_keys(knowledge_on) == []
    clock.move(domain.FAILURE_HOLD_SECONDS + 1)  # the failure has stood its time: a new verification
    assert download(api, export_id).status == 409
    assert export_verifier.deliver() == [{"export_id": export_id, "outcome": "verified"}]
    assert download(api, export_id).status == 303


def test_a_failed_verification_stands_the_documented_five_minutes_and_no_longer(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, export_verifier: ExportVerifier, clock: Clock
) -> None:
    """The documented hold, in seconds typed here (docs/api.md: "for five minutes"): a test that
    moves the clock by the constant moves with it (issue 39's survivor, 300 -> 3000)."""
    export_id = completed(api)
    book.get(export_id).faults.append("corrupt")
    assert download(api, export_id).status == 409
    assert export_verifier.deliver() == [{"export_id": export_id, "outcome": "mismatch"}]
    clock.move(5 * 60 - 1)
    assert download(api, export_id).status == 502  # still standing a second before five minutes
    clock.move(2)
    assert download(api, export_id).status == 409  # stood its five minutes: verified again
    assert export_verifier.deliver() == [{"export_id": export_id, "outcome": "verified"}]


def test_a_dead_verifiers_lease_expires_and_the_next_verifier_takes_it(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, export_verifier: ExportVerifier
) -> None:
    """A verifier that died holding the lease does not hold the export for ever (issue 39's survivor)."""
    export_id = completed(api)
    assert knowledge_on.archives.claim(export_id, "dead-verifier", -1)  # its lease already past
    assert download(api, export_id).status == 409
    assert export_verifier.deliver() == [{"export_id": export_id, "outcome": "verified"}]
    assert download(api, export_id).status == 303


def test_a_verified_archive_settles_its_request_row(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, export_verifier: ExportVerifier
) -> None:
    """Once verified, the request row is gone: nothing is left to ask again (issue 39's survivor)."""
    export_id = completed(api)
    assert download(api, export_id).status == 409
    assert export_verifier.deliver() == [{"export_id": export_id, "outcome": "verified"}]
    pending = knowledge_on.archives._leases.get_item(Key={"pk": VERIFICATION_PK, "sk": export_id}).get("Item")
    assert pending is None


def test_a_hundred_injected_corruptions_hand_nothing_over_and_leave_nothing_behind(
    api: Api,
    knowledge_on: Runtime,
    book: sim_exports.ExportBook,
    export_verifier: ExportVerifier,
    clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(domain, "PART_BYTES", 48 * 1024)  # several parts uploaded before the check fails
    export_id = completed(api)
    export = book.get(export_id)
    sha256 = str(export.to_json()["sha256"])
    kinds = list(itertools.islice(itertools.cycle(KINDS), 100))
    export.faults.extend(kinds)
    for number, kind in enumerate(kinds):
        asked = download(api, export_id)
        assert (asked.status, asked.body["code"]) == (409, "not_ready"), (number, kind, asked.body)
        assert export_verifier.deliver() == [{"export_id": export_id, "outcome": "mismatch"}], (number, kind)
        answer = download(api, export_id)
        assert (answer.status, answer.body["code"]) == (502, "upstream_mismatch"), (number, kind, answer.body)
        assert "Location" not in answer.headers
        assert knowledge_on.archives.size_of(archive_key(export_id, sha256)) is None
        assert knowledge_on.archives.open_uploads() == [], (number, kind)
        clock.move(domain.FAILURE_HOLD_SECONDS + 1)
    assert s3_keys(knowledge_on) == []
    assert knowledge_on.events.recent("knowledge_export_downloaded") == []
    monkeypatch.setattr(domain, "PART_BYTES", 8 * 1024 * 1024)  # S3's 5 MiB minimum holds for completion
    assert verified(api, export_verifier, export_id).status == 303  # the faults spent, the true archive verifies


def test_a_body_that_breaks_off_aborts_the_upload_and_the_event_is_retried(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, forager: Double, export_verifier: ExportVerifier
) -> None:
    export_id = completed(api)
    forager.set_fault("reset", path_prefix=f"/api/exports/{export_id}/download", times=1)
    assert download(api, export_id).status == 409
    (event,) = export_verifier.take()
    with pytest.raises(UpstreamError):  # transient: raised, so Lambda retries the event
        export_verifier.invoke(event)
    assert knowledge_on.archives.open_uploads() == [] and s3_keys(knowledge_on) == []
    assert download(api, export_id).status == 409  # still being verified: not asked again meanwhile
    assert export_verifier.take() == []
    assert export_verifier.invoke(event) == {"export_id": export_id, "outcome": "verified"}  # the retry
    assert download(api, export_id).status == 303


def test_an_event_that_is_not_a_verification_request_is_dropped(
    knowledge_on: Runtime, export_verifier: ExportVerifier, forager: Double
) -> None:
    event = {"id": "e1", "detail-type": "knowledge.export.verification_requested", "detail": {"export_id": "x"}}
    assert export_verifier.invoke(event) == {"export_id": None, "outcome": "not_a_request"}
    assert archive_requests(forager) == []


def test_an_export_that_expired_before_the_verifier_came_is_left_to_the_downloads_410(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, forager: Double, export_verifier: ExportVerifier
) -> None:
    export_id = completed(api)
    assert download(api, export_id).status == 409
    book.get(export_id).archive_expired_at = "2026-10-01T00:00:00Z"
    assert export_verifier.deliver() == [{"export_id": export_id, "outcome": "no_archive"}]
    assert archive_requests(forager) == []
    gone = download(api, export_id)
    assert (gone.status, gone.body["code"]) == (410, "gone")


def test_the_verifier_holds_an_export_to_the_knowledge_base_its_download_resolved(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, forager: Double, export_verifier: ExportVerifier
) -> None:
    export_id = completed(api)
    assert download(api, export_id).status == 409
    (event,) = export_verifier.take()
    event["detail"]["knowledge_base"] = "harbour"
    assert export_verifier.invoke(event) == {"export_id": export_id, "outcome": "not_this_base"}
    assert archive_requests(forager) == [] and s3_keys(knowledge_on) == []
    assert download(api, export_id).status == 409  # settled: this download asks again
    assert len(export_verifier.take()) == 1
