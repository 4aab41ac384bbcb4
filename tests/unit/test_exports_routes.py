"""The exports routes: history, start, one export, and the archive verified into S3."""

from __future__ import annotations

import hashlib
import itertools
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest

from forager_simulator import Simulator, exports as sim_exports
from knowledge_service.domain import exports as domain
from knowledge_service.identity.principal import Permission, ProjectRole
from knowledge_service.runtime import Runtime
from knowledge_service.storage.archives import archive_key
from tests.conftest import TEMPLATE, Api, principal

OWNER = principal("olive", Permission.READ_KNOWLEDGE, owns=frozenset({"colony"}))
VIEWER = principal("vic", Permission.READ_KNOWLEDGE, roles={"falcon": ProjectRole.VIEWER})
OPERATOR = principal("opal", Permission.READ_KNOWLEDGE, roles={"falcon": ProjectRole.OPERATOR})


@pytest.fixture
def book(forager: Simulator) -> sim_exports.ExportBook:
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
    answer = start(api, {"format": "obsidian", "options": options} if options else None)
    assert answer.status == 200, answer.body
    return str(answer.body["data"]["export_id"])


def s3_keys(rt: Runtime) -> list[str]:
    listing = boto3.client("s3").list_objects_v2(Bucket=rt.env.archive_bucket)
    return [o["Key"] for o in listing.get("Contents", [])]


# ---------------------------------------------------------------- history, start, one
def test_start_answers_the_running_export_and_passes_the_idempotency_key(
    api: Api, knowledge_on: Runtime, forager: Simulator
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
    api: Api, knowledge_on: Runtime, forager: Simulator, body: dict[str, Any], field: str
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
    api: Api, knowledge_on: Runtime, forager: Simulator
) -> None:
    before = len(forager.requests)
    answer = download(api, "exp_NOT-HEX")
    assert (answer.status, answer.body["code"]) == (400, "bad_request")
    assert len(forager.requests) == before


# ---------------------------------------------------------------- the archive
def test_download_hands_over_a_verified_archive_by_presigned_url(
    api: Api, knowledge_on: Runtime, forager: Simulator, book: sim_exports.ExportBook
) -> None:
    export_id = completed(api, vault_name='Harbour / Q3 "final"')
    row = book.get(export_id).to_json()
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


def test_a_second_download_does_not_fetch_the_archive_again(
    api: Api, knowledge_on: Runtime, forager: Simulator, book: sim_exports.ExportBook
) -> None:
    export_id = completed(api)
    assert download(api, export_id).status == 303
    fetched = [r for r in forager.requests if r["path"].endswith("/download")]
    assert download(api, export_id).status == 303
    assert [r for r in forager.requests if r["path"].endswith("/download")] == fetched
    assert len(fetched) == 1


def test_a_large_archive_travels_as_several_parts_and_verifies(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(domain, "PART_BYTES", 5 * 1024 * 1024)
    book.archive_bytes = 11 * 1024 * 1024 + 17
    export_id = completed(api)
    assert download(api, export_id).status == 303
    head = boto3.client("s3").head_object(
        Bucket=knowledge_on.env.archive_bucket, Key=archive_key(export_id, str(book.get(export_id).sha256))
    )
    assert head["ContentLength"] == book.archive_bytes
    assert head["ETag"].endswith('-3"')  # three parts


def test_a_running_export_is_409_not_ready_with_retry_after(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook
) -> None:
    book.build_seconds = 60
    answer = download(api, completed(api))
    assert (answer.status, answer.body["code"]) == (409, "not_ready")
    assert answer.headers["Retry-After"] == "5"


def test_an_archive_being_verified_by_another_request_is_409_not_ready(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, forager: Simulator
) -> None:
    export_id = completed(api)
    assert knowledge_on.archives.claim(export_id, "another-request", 900)
    answer = download(api, export_id)
    assert (answer.status, answer.body["code"], answer.headers["Retry-After"]) == (409, "not_ready", "5")
    assert not [r for r in forager.requests if r["path"].endswith("/download")]


def test_written_to_folder_is_409_and_an_expired_archive_is_410_gone(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook
) -> None:
    folder, expired = completed(api), completed(api)
    book.get(folder).written_to_folder = True
    book.get(expired).archive_expired_at = "2026-10-01T00:00:00Z"
    to_folder, gone = download(api, folder), download(api, expired)
    assert (to_folder.status, to_folder.body["code"]) == (409, "written_to_folder")
    assert (gone.status, gone.body["code"]) == (410, "gone")


def test_an_expired_archive_is_410_gone_and_the_colonys_verified_copy_goes_with_it(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook
) -> None:
    export_id = completed(api)
    assert download(api, export_id).status == 303
    assert s3_keys(knowledge_on) == [archive_key(export_id, book.get(export_id).to_json()["sha256"])]
    book.get(export_id).archive_expired_at = "2026-10-01T00:00:00Z"
    gone = download(api, export_id)
    assert (gone.status, gone.body["code"]) == (410, "gone")
    assert s3_keys(knowledge_on) == []


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
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, who: Any, status: int
) -> None:
    export_id = completed(api)
    assert download(api, export_id, who).status == status
    assert api.call("GET", "/knowledge/exports", who, query={"project": "falcon"}).status == 200


def test_exports_are_never_gated_a_lapsed_subscription_takes_away_what_it_has(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook
) -> None:
    from knowledge_service.models import Subscription, SubscriptionRecord

    knowledge_on.config.save_subscription(SubscriptionRecord(state=Subscription.LAPSED), "test")
    knowledge_on.subscriptions.forget()
    assert download(api, completed(api)).status == 303


def test_start_and_download_leave_event_log_rows_with_digest_and_size(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook
) -> None:
    export_id = completed(api)
    assert download(api, export_id).status == 303
    started = knowledge_on.events.recent("knowledge_export_started")[0]
    taken = knowledge_on.events.recent("knowledge_export_downloaded")[0]
    row = book.get(export_id).to_json()
    assert (started.actor, started.payload["record"], started.payload["project"]) == ("opal", export_id, "falcon")
    assert taken.payload["sha256"] == row["sha256"]
    assert int(taken.payload["size_bytes"]) == row["size_bytes"]
    assert taken.payload["knowledge_base"] == "falcon"


# ---------------------------------------------------------------- a hundred corruptions
KINDS = ("corrupt", "truncate", "extend", "wrong_digest", "wrong_record")


def test_a_hundred_injected_corruptions_hand_nothing_over_and_leave_nothing_behind(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(domain, "PART_BYTES", 48 * 1024)  # several parts uploaded before the check fails
    export_id = completed(api)
    export = book.get(export_id)
    sha256 = str(export.to_json()["sha256"])
    kinds = list(itertools.islice(itertools.cycle(KINDS), 100))
    export.faults.extend(kinds)
    for number, kind in enumerate(kinds):
        answer = download(api, export_id)
        assert (answer.status, answer.body["code"]) == (502, "upstream_mismatch"), (number, kind, answer.body)
        assert "Location" not in answer.headers
        assert knowledge_on.archives.size_of(archive_key(export_id, sha256)) is None
        assert knowledge_on.archives.open_uploads() == [], (number, kind)
    assert s3_keys(knowledge_on) == []
    assert knowledge_on.events.recent("knowledge_export_downloaded") == []
    monkeypatch.setattr(domain, "PART_BYTES", 8 * 1024 * 1024)  # S3's 5 MiB minimum holds for completion
    assert download(api, export_id).status == 303  # the faults spent, the true archive verifies


def test_a_body_that_breaks_off_aborts_the_upload(
    api: Api, knowledge_on: Runtime, book: sim_exports.ExportBook, forager: Simulator
) -> None:
    export_id = completed(api)
    forager.set_fault("reset", path_prefix=f"/api/exports/{export_id}/download", times=1)
    answer = download(api, export_id)
    assert answer.status == 502
    assert knowledge_on.archives.open_uploads() == [] and s3_keys(knowledge_on) == []
