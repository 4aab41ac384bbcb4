"""Every pages route and every row of the Refusals table, through the authorizer and the
pages function (the in-process API Gateway reading template.yaml)."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from moto.core.botocore_stubber import BotocoreStubber

from knowledge_service.domain.pages import service
from knowledge_service.domain.pages.service import Pages as PagesDomain
from knowledge_service.errors import Conflict, PayloadTooLarge
from knowledge_service.storage.page_store import PageStore, version_of
from tests.budget import sized
from tests.pages.conftest import KB, Client, Pages

PAGE = "---\ntype: Runbook\ntitle: Deploy the hub\n---\n# Deploy\nSee [caddy](caddy.md).\n"


def put_ok(client: Client, path: str, content: str = PAGE, **kwargs: object) -> dict[str, object]:
    answer = client.put(path, content, **kwargs)
    assert answer.status == 200, answer.body
    return answer.body  # type: ignore[no-any-return]


def problem_of(answer: object, status: int, code: str) -> None:
    assert answer.status == status, answer.body  # type: ignore[attr-defined]
    assert answer.headers["content-type"] == "application/problem+json"  # type: ignore[attr-defined]
    assert answer.body["code"] == code  # type: ignore[attr-defined]
    assert answer.body["status"] == status  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- pages
def test_a_page_put_as_json_reads_back_byte_for_byte_under_its_canonical_path(admin: Client) -> None:
    written = put_ok(admin, "svc/./ops/../deploy.md", PAGE)
    assert written["path"] == "/fs/svc/deploy.md"
    assert written["version"] == version_of(PAGE.encode())
    got = admin.get(f"{KB}/pages/fs/svc/deploy.md").body
    assert got["content"] == PAGE
    assert got["version"] == written["version"]
    assert got["size_bytes"] == len(PAGE.encode())
    assert got["last_write"]["actor"] == "human"


def test_every_write_names_its_principal_beside_the_specs_actor_word(admin: Client, pages: Pages) -> None:
    """``actor`` stays the specification's word for a person's write (``human``); ``principal``
    names who wrote, on the last write, each version, the history, the listing and the stats."""
    one = put_ok(admin, "named.md")
    put_ok(admin, "named.md", PAGE + "more\n", if_version=one["version"])
    admin.call("POST", f"{KB}/pages/named.md/review", json_body={})
    pages.as_("owner").call("POST", f"{KB}/pages/named.md/revert", json_body={"version": one["version"]})

    got = admin.get(f"{KB}/pages/named.md").body
    assert got["last_write"]["actor"] == "human" and got["last_write"]["principal"] == "olga"
    versions = admin.get(f"{KB}/versions?path=named.md").body["versions"]
    assert [(v["actor"], v["principal"], v["summary"]) for v in versions] == [
        ("human", "olga", f"restored the version of {versions[-1]['at']}"),
        ("human", "ada", "reviewed"),
        ("human", "ada", "edited"),
        ("human", "ada", "created"),
    ]
    assert admin.get(f"{KB}/pages/named.md?version={one['version']}").body["principal"] == "olga"
    assert [r["principal"] for r in admin.get(f"{KB}/history?path=named.md").body["rows"]] == [
        "olga",
        "ada",
        "ada",
        "ada",
    ]
    [row] = [r for r in admin.get(f"{KB}/pages?meta=1").body["entries"] if r["path"] == "/fs/named.md"]
    assert (row["last_write_by"], row["last_write_principal"]) == ("human", "olga")
    assert admin.get(f"{KB}/stats").body["last_change_principal"] == "olga"


@pytest.mark.parametrize("media", ["text/markdown", "text/plain", "text/markdown; charset=utf-8"])
def test_a_page_put_as_text_is_stored_as_sent(admin: Client, media: str) -> None:
    text = "no frontmatter\r\n\tkept as sent\n"
    answer = admin.call("PUT", f"{KB}/pages/notes.md", text=text, content_type=media)
    assert answer.status == 200
    assert admin.get(f"{KB}/pages/notes.md").body["content"] == text
    assert [f["code"] for f in answer.body["lint"]] == ["missing_frontmatter"]
    assert "type" in answer.body["lint"][0]["message"]


def test_lint_findings_come_back_on_every_write_and_never_fail_it(admin: Client) -> None:
    answer = admin.put("a.md", "---yaml\nokf_version: 1\n---\n[x](missing.md) [y](../../out.md)\n")
    assert answer.status == 200
    codes = {f["code"] for f in answer.body["lint"]}
    assert codes == {"unparsed_frontmatter", "broken_link", "link_escapes_bundle"}
    answer = admin.put("b.md", "---\nokf_version: 1\n---\n")
    assert {f["code"] for f in answer.body["lint"]} == {"missing_type", "okf_version_misplaced"}


def test_the_listing_is_one_level_and_meta_is_the_subtree_in_path_order(admin: Client) -> None:
    put_ok(admin, "svc/caddy.md", "---\ntype: Concept\ntags: [ops]\nstale_after: 2000-01-01\n---\n")
    put_ok(admin, "svc/deep/x.md", "x")
    put_ok(admin, "top.md", "t")
    level = admin.get(f"{KB}/pages").body
    assert level == {
        "entries": [
            {
                "path": "/fs/svc",
                "type": "dir",
                "size_bytes": len("---\ntype: Concept\ntags: [ops]\nstale_after: 2000-01-01\n---\n"),
                "children": 2,
            },
            {"path": "/fs/top.md", "type": "file", "size_bytes": 1, "children": None},
        ],
        "truncated": False,
    }
    meta = admin.get(f"{KB}/pages?meta=1&prefix=svc").body["entries"]
    assert [row["path"] for row in meta] == ["/fs/svc/caddy.md", "/fs/svc/deep", "/fs/svc/deep/x.md"]
    caddy = meta[0]
    assert caddy["page_type"] == "Concept" and caddy["tags"] == ["ops"] and caddy["stale"] is True
    assert caddy["trust"] == "unverified" and meta[2]["title"] is None
    limited = admin.get(f"{KB}/pages?meta=1&limit=2").body
    assert len(limited["entries"]) == 2 and limited["truncated"] is True


def test_a_listing_over_500_is_refused(admin: Client) -> None:
    problem_of(admin.get(f"{KB}/pages?limit=501"), 400, "invalid_argument")


def test_delete_removes_the_page_keeps_its_history_and_signals_once(admin: Client, pages: Pages) -> None:
    put_ok(admin, "gone.md", "bye")
    answer = admin.call("DELETE", f"{KB}/pages/gone.md")
    assert answer.status == 200 and answer.body == {"ok": True, "path": "/fs/gone.md"}
    problem_of(admin.get(f"{KB}/pages/gone.md"), 404, "not_found")
    versions = admin.get(f"{KB}/versions?path=gone.md").body
    assert versions["current_version"] is None
    assert [v["summary"] for v in versions["versions"]] == ["deleted", "created"]
    signals = [row["signal"] for row in pages.runtime.pages.feed("falcon")]
    assert signals == ["kb_put", "kb_deleted"]


def test_deleting_a_missing_page_is_the_same_404_as_reading_it_and_logs_nothing(admin: Client, pages: Pages) -> None:
    read = admin.get(f"{KB}/pages/nothing.md")
    deleted = admin.call("DELETE", f"{KB}/pages/nothing.md")
    assert (read.status, read.body) == (deleted.status, deleted.body) == (404, read.body)
    assert pages.runtime.pages.log("falcon") == [] and pages.runtime.pages.feed("falcon") == []


def test_deleting_a_directory_that_still_holds_pages_is_refused(admin: Client) -> None:
    put_ok(admin, "dir/a.md", "a")
    problem_of(admin.call("DELETE", f"{KB}/pages/dir"), 400, "invalid_argument")
    assert admin.call("DELETE", f"{KB}/pages/dir/a.md").status == 200
    problem_of(admin.call("DELETE", f"{KB}/pages/dir"), 404, "not_found")


# ---------------------------------------------------------------------- if_version
def test_if_version_guards_put_and_delete_and_names_the_current_version(admin: Client) -> None:
    first = put_ok(admin, "g.md", "one", if_version="absent")
    answer = admin.put("g.md", "two", if_version="absent")
    problem_of(answer, 409, "conflict")
    assert answer.body["detail"].endswith(f"current_version={first['version']}")
    answer = admin.put("g.md", "two", if_version="sha256:" + "0" * 64)
    problem_of(answer, 409, "conflict")
    second = put_ok(admin, "g.md", "two", if_version=first["version"])
    answer = admin.call("PUT", f"{KB}/pages/g.md?if_version={first['version']}", text="three")
    problem_of(answer, 409, "conflict")
    problem_of(admin.call("DELETE", f"{KB}/pages/g.md?if_version={first['version']}"), 409, "conflict")
    assert admin.call("DELETE", f"{KB}/pages/g.md?if_version={second['version']}").status == 200
    answer = admin.put("g.md", "x", if_version=second["version"])
    assert answer.body["detail"].endswith("current_version=absent")


RACE_TRIALS = sized(ci=50, deep=200)
"""Each trial is a full race (both writers stopped at the barrier); 200 cost 50-170 s under load."""


def test_two_writers_with_the_same_if_version_one_wins_in_every_trial(
    pages: Pages, monkeypatch: pytest.MonkeyPatch
) -> None:
    store: PageStore = pages.runtime.pages
    domain = PagesDomain(store, "falcon")
    base = domain.put("race.md", "base", None)
    barrier = threading.Barrier(2, timeout=10)
    real_write = PageStore.write

    def write_after_both_read(self: PageStore, write: object) -> object:
        barrier.wait()  # both writers have read the head and passed the guard check
        return real_write(self, write)  # type: ignore[arg-type]

    monkeypatch.setattr(PageStore, "write", write_after_both_read)
    # The emulator in single-threaded mode: one AWS request at a time, as a server with one
    # worker answers them (moto's in-process backend is not atomic across threads).
    emulator = threading.Lock()
    real_call = BotocoreStubber.__call__

    def one_at_a_time(self: BotocoreStubber, *args: Any, **kwargs: Any) -> Any:
        with emulator:
            return real_call(self, *args, **kwargs)

    monkeypatch.setattr(BotocoreStubber, "__call__", one_at_a_time)
    version = base.version
    for trial in range(RACE_TRIALS):
        outcomes: list[str] = []

        def writer(n: int, outcomes: list[str] = outcomes, guard: str = version, trial: int = trial) -> None:
            try:
                domain.put("race.md", f"trial {trial} writer {n}", guard)
                outcomes.append("200")
            except Conflict:
                outcomes.append("409")

        threads = [threading.Thread(target=writer, args=(n,)) for n in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcomes) == ["200", "409"], f"trial {trial}: {outcomes}"
        version = store.head("falcon", "/fs/race.md").version  # type: ignore[union-attr,assignment]


# ---------------------------------------------------------------------- limits
def test_a_page_over_one_mib_is_refused_and_nothing_is_written(admin: Client, pages: Pages) -> None:
    big = "a" * (service.MAX_PAGE_BYTES + 1)
    problem_of(admin.call("PUT", f"{KB}/pages/big.md", text=big), 413, "payload_too_large")
    problem_of(admin.put("big.md", big), 413, "payload_too_large")
    assert admin.put("big.md", "a" * service.MAX_PAGE_BYTES).status == 200
    assert len(pages.runtime.pages.log("falcon")) == 1


def test_a_json_body_over_four_mib_is_refused_before_it_is_parsed(admin: Client) -> None:
    body = "{" + " " * (service.MAX_BODY_BYTES + 1)  # not even JSON: the size is told first
    answer = admin.call("PUT", f"{KB}/pages/x.md", text=body, content_type="application/json")
    problem_of(answer, 413, "payload_too_large")


def test_a_write_past_256_mib_carries_a_warning_and_past_1_gib_is_refused(
    admin: Client, pages: Pages, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service, "WARN_BASE_BYTES", 10)
    monkeypatch.setattr(service, "MAX_BASE_BYTES", 30)
    assert put_ok(admin, "a.md", "12345")["warnings"] == []
    assert put_ok(admin, "b.md", "1234567890")["warnings"] != []  # 15 bytes kept, over the warning
    problem_of(admin.put("c.md", "x" * 16), 413, "payload_too_large")  # 31 > 30, old versions count
    assert admin.call("DELETE", f"{KB}/pages/a.md").status == 200  # a delete is never refused


def test_a_history_limit_over_200_is_refused(admin: Client) -> None:
    problem_of(admin.get(f"{KB}/history?limit=201"), 400, "invalid_argument")
    problem_of(admin.get(f"{KB}/versions?path=a.md&limit=201"), 400, "invalid_argument")


# ---------------------------------------------------------------------- refusals
@pytest.mark.parametrize("path", ["kv/x.md", "a%00b.md", "a%0Ab.md", "a%09b.md", "a%5Cb.md", "x/" + "y" * 600])
def test_refused_paths_are_invalid_argument(admin: Client, path: str) -> None:
    problem_of(admin.call("PUT", f"{KB}/pages/{path}", text="x"), 400, "invalid_argument")
    problem_of(admin.get(f"{KB}/pages/{path}"), 400, "invalid_argument")


@pytest.mark.parametrize(
    ("body", "field"),
    [('{"content": "x"', "body"), ('{"content": "x", "extra": 1}', "extra"), ("[1]", "body"), ('{"contents": 1}', "")],
)
def test_a_json_body_that_does_not_parse_or_knows_other_fields_is_400_and_never_stored(
    admin: Client, body: str, field: str
) -> None:
    answer = admin.call("PUT", f"{KB}/pages/j.md", text=body, content_type="application/json")
    problem_of(answer, 400, "invalid_argument")
    problem_of(admin.get(f"{KB}/pages/j.md"), 404, "not_found")


def test_a_frontmatter_value_with_a_control_character_is_refused(admin: Client) -> None:
    problem_of(admin.put("c.md", "---\ntitle: a\u0007b\n---\n"), 400, "invalid_argument")


@pytest.mark.parametrize("media", ["application/xml", "image/png", None])
def test_a_page_sent_as_anything_else_is_415(admin: Client, media: str | None) -> None:
    answer = admin.call("PUT", f"{KB}/pages/m.md", text="x", content_type=media or "")
    problem_of(answer, 415, "invalid_argument")


@pytest.mark.parametrize("who", ["agent", "operator", "other-admin", None])
@pytest.mark.parametrize(
    ("method", "target", "body"),
    [
        ("GET", "/pages", None),
        ("PUT", "/pages/x.md", '{"content": "x"}'),
        ("PUT", "/pages/x.md", "{not json"),
        ("PUT", "/pages/x.md", " " * (service.MAX_BODY_BYTES + 10)),
        ("POST", "/pages/x.md/review", "{}"),
        ("POST", "/promote", "{bad"),
        ("DELETE", "/versions?path=x.md", None),
        ("GET", "/stats", None),
        ("GET", "/search?q=caddy", None),
    ],
)
def test_without_the_admin_token_every_route_is_401_whatever_the_body(
    pages: Pages, who: str | None, method: str, target: str, body: str | None
) -> None:
    client = pages.as_(who) if who else Client(pages.gateway, None)
    answer = client.call(method, KB + target, text=body, content_type="application/json")
    assert answer.status == 401
    if who:  # the authorizer's own 401 (no token) is API Gateway's shape
        problem_of(answer, 401, "unauthenticated")


def test_an_owner_of_the_projects_organization_is_the_admin_token(pages: Pages) -> None:
    assert put_ok(pages.as_("owner"), "o.md", "o")["path"] == "/fs/o.md"


def test_a_query_string_that_cannot_be_read_is_400_before_the_gate(pages: Pages) -> None:
    problem_of(pages.as_("agent").get(f"{KB}/history?limit=many"), 400, "invalid_argument")


def test_a_project_that_does_not_exist(pages: Pages) -> None:
    problem_of(pages.as_("owner").get("/api/v1/projects/nowhere/kb/stats"), 404, "not_found")
    problem_of(pages.as_("admin").get("/api/v1/projects/nowhere/kb/stats"), 401, "unauthenticated")


def test_another_projects_page_is_not_found_byte_identical_to_a_missing_one(pages: Pages) -> None:
    other = pages.as_("other-admin")
    assert other.put("secret.md", "s").status == 401  # eve is not falcon's admin
    elsewhere = "/api/v1/projects/elsewhere/kb"
    assert other.call("PUT", f"{elsewhere}/pages/secret.md", json_body={"content": "s"}).status == 200
    admin = pages.as_("admin")
    put_ok(admin, "mine.md", "m")
    theirs = admin.get(f"{KB}/pages/secret.md")
    missing = admin.get(f"{KB}/pages/never-written.md")
    assert theirs.status == missing.status == 404
    assert theirs.raw.replace(b"secret", b"X") == missing.raw.replace(b"never-written", b"X")
    assert [e["path"] for e in other.get(f"{elsewhere}/pages").body["entries"]] == ["/fs/secret.md"]


# ---------------------------------------------------------------------- versions, revert, history
def test_versions_revert_and_changed_false(admin: Client, pages: Pages) -> None:
    one = put_ok(admin, "v.md", "one")
    two = put_ok(admin, "v.md", "two")
    old = admin.get(f"{KB}/pages/v.md?version={one['version']}").body
    assert old["content"] == "one" and old["current"] is False and old["actor"] == "human"
    reverted = admin.call("POST", f"{KB}/pages/v.md/revert", json_body={"version": one["version"]})
    assert reverted.status == 200 and reverted.body["changed"] is True
    assert reverted.body["version"] == one["version"]
    again = admin.call("POST", f"{KB}/pages/v.md/revert", json_body={"version": one["version"]})
    assert again.body["changed"] is False
    versions = admin.get(f"{KB}/versions?path=v.md").body
    assert versions["versions"][0]["summary"].startswith("restored the version of ")
    assert [v["current"] for v in versions["versions"]] == [True, False, False]
    assert versions["total"] == 3 and versions["current_version"] == one["version"]
    assert [r["signal"] for r in pages.runtime.pages.feed("falcon")] == ["kb_put", "kb_put", "kb_reverted"]
    problem_of(
        admin.call("POST", f"{KB}/pages/v.md/revert", json_body={"version": "sha256:" + "1" * 64}), 404, "not_found"
    )
    problem_of(
        admin.call("POST", f"{KB}/pages/v.md/revert", text="{", content_type="application/json"),
        400,
        "invalid_argument",
    )
    problem_of(
        admin.call("POST", f"{KB}/pages/v.md/revert", json_body={"version": two["version"], "if_version": "absent"}),
        409,
        "conflict",
    )


def test_a_deleted_page_is_restored_with_if_version_absent(admin: Client) -> None:
    one = put_ok(admin, "d.md", "one")
    admin.call("DELETE", f"{KB}/pages/d.md")
    assert admin.get(f"{KB}/pages/d.md?version={one['version']}").body["content"] == "one"
    answer = admin.call(
        "POST", f"{KB}/pages/d.md/revert", json_body={"version": one["version"], "if_version": "absent"}
    )
    assert answer.status == 200 and admin.get(f"{KB}/pages/d.md").body["content"] == "one"


def test_identical_bytes_are_stored_once(admin: Client, pages: Pages) -> None:
    put_ok(admin, "a.md", "same")
    put_ok(admin, "b.md", "same")
    put_ok(admin, "a.md", "same")
    assert list(pages.runtime.pages.kept_versions("falcon").values()) == [4]


def test_history_filters_cursor_total_and_limit_zero(admin: Client) -> None:
    for n in range(5):
        put_ok(admin, f"h/{n}.md", str(n))
    put_ok(admin, "other.md", "o")
    assert admin.get(f"{KB}/history?limit=0").body == {"rows": [], "total": 6, "next_before": None, "truncated": True}
    first = admin.get(f"{KB}/history?prefix=h&limit=2").body
    assert [r["path"] for r in first["rows"]] == ["/fs/h/4.md", "/fs/h/3.md"]
    assert first["total"] == 5 and first["truncated"] is True
    second = admin.get(f"{KB}/history?prefix=h&limit=2&before={first['next_before']}").body
    assert [r["path"] for r in second["rows"]] == ["/fs/h/2.md", "/fs/h/1.md"]
    assert admin.get(f"{KB}/history?path=other.md").body["rows"][0]["op"] == "kb.put"
    assert admin.get(f"{KB}/history?op=kb.delete").body["total"] == 0
    assert admin.get(f"{KB}/history?actor=human").body["total"] == 6


def test_forgetting_a_history_audits_first_and_leaves_rows_reading_kept_false(admin: Client, pages: Pages) -> None:
    one = put_ok(admin, "f.md", "one")
    put_ok(admin, "f.md", "two")
    put_ok(admin, "shared.md", "one")  # the same bytes another page's history names
    put_ok(admin, "f.md", "three")
    answer = admin.call("DELETE", f"{KB}/versions?path=f.md")
    assert answer.status == 200
    assert answer.body == {
        "ok": True,
        "path": "/fs/f.md",
        "versions_forgotten": 1,
        "bytes_forgotten": 3,
        "unreferenced_forgotten": 0,
    }
    kept = [v["kept"] for v in admin.get(f"{KB}/versions?path=f.md").body["versions"]]
    assert kept == [True, False, False]
    problem_of(admin.get(f"{KB}/pages/f.md?version={one['version']}"), 404, "not_found")
    assert admin.get(f"{KB}/pages/shared.md?version={one['version']}").status == 200
    audit = pages.runtime.events.recent("system")
    assert audit[0].payload["action"] == "kb_history_forgotten" and audit[0].payload["versions"] == 1
    problem_of(admin.call("DELETE", f"{KB}/versions?path=never.md"), 404, "not_found")


def test_a_purge_that_fails_after_its_audit_appends_a_rollback_event(
    admin: Client, pages: Pages, monkeypatch: pytest.MonkeyPatch
) -> None:
    put_ok(admin, "r.md", "one")
    put_ok(admin, "r.md", "two")

    def fail(*_: object) -> None:
        raise RuntimeError("the store failed")

    monkeypatch.setattr(PageStore, "mark_forgotten", fail)
    assert admin.call("DELETE", f"{KB}/versions?path=r.md").status == 500
    actions = [e.payload["action"] for e in pages.runtime.events.recent("system")]
    assert actions[:2] == ["kb_history_forget_rolled_back", "kb_history_forgotten"]
    assert all(v["kept"] for v in admin.get(f"{KB}/versions?path=r.md").body["versions"])


def test_a_crash_between_keeping_bytes_and_logging_is_swept(admin: Client, pages: Pages) -> None:
    put_ok(admin, "s.md", "one")
    pages.runtime.pages.keep("falcon", b"orphan bytes")
    answer = admin.call("DELETE", f"{KB}/versions?path=s.md").body
    assert answer["unreferenced_forgotten"] == 1
    assert version_of(b"orphan bytes") not in pages.runtime.pages.kept_versions("falcon")


# ---------------------------------------------------------------------- review and trust
def _trust(admin: Client, path: str) -> str:
    rows = admin.get(f"{KB}/pages?meta=1").body["entries"]
    return next(r["trust"] for r in rows if r["path"] == path)


def test_review_appends_one_entry_changes_no_other_byte_and_derives_trust(admin: Client, pages: Pages) -> None:
    put_ok(admin, "t.md", PAGE)
    assert _trust(admin, "/fs/t.md") == "unverified"
    reviewed = admin.call("POST", f"{KB}/pages/t.md/review", json_body={"verified_by": "human"})
    assert reviewed.status == 200 and set(reviewed.body) == {"ok", "path", "version"}
    content = admin.get(f"{KB}/pages/t.md").body["content"]
    assert content.replace(content[content.index("verified:") : content.index("---\n#")], "") == PAGE
    assert _trust(admin, "/fs/t.md") == "human_reviewed"
    edited = put_ok(admin, "t.md", content + "more\n")
    assert _trust(admin, "/fs/t.md") == "edited_since_review"
    put_ok(admin, "t.md", content)  # the verified bytes back: verified again
    assert _trust(admin, "/fs/t.md") == "human_reviewed"
    assert edited["version"] != version_of(content.encode())
    rows = admin.get(f"{KB}/history?op=kb.review").body["rows"]
    assert [(r["op"], r["actor"]) for r in rows] == [("kb.review", "human")]
    assert "kb_reviewed" in [r["signal"] for r in pages.runtime.pages.feed("falcon")]


def test_an_agents_own_fresh_verification_is_machine_confirmed_and_an_old_one_is_not(admin: Client) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    old = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    put_ok(admin, "m.md", f"---\ntype: Concept\nverified:\n  - by: agent-7\n    at: {now}\n---\n")
    assert _trust(admin, "/fs/m.md") == "machine_confirmed"
    put_ok(admin, "o.md", f"---\ntype: Concept\nverified:\n  - by: human\n    at: {old}\n---\n")
    assert _trust(admin, "/fs/o.md") == "edited_since_review"


def test_review_refusals(admin: Client) -> None:
    first = put_ok(admin, "r.md", PAGE)
    problem_of(admin.call("POST", f"{KB}/pages/r.md/review", json_body={"verified_by": "bot"}), 400, "invalid_argument")
    put_ok(admin, "r.md", PAGE + "edit\n")
    answer = admin.call("POST", f"{KB}/pages/r.md/review", json_body={"if_version": first["version"]})
    problem_of(answer, 409, "conflict")
    put_ok(admin, "u.md", "--- # comment\ntype: Concept\n---\n")
    problem_of(admin.call("POST", f"{KB}/pages/u.md/review"), 400, "invalid_argument")
    problem_of(admin.call("POST", f"{KB}/pages/missing.md/review"), 404, "not_found")
    problem_of(admin.call("POST", f"{KB}/pages/r.md/review", json_body={"by": "x"}), 400, "invalid_argument")


# ---------------------------------------------------------------------- promote
def test_promote_copies_a_brain_entry_with_the_patch_and_the_source(admin: Client, pages: Pages) -> None:
    store = pages.runtime.pages
    store.create_session("s1", "falcon", "Morning")
    store.brain_put("s1", "/notes/deploy.md", b"# Deploy notes\n")
    answer = admin.call(
        "POST",
        f"{KB}/promote",
        json_body={
            "from_session_id": "s1",
            "from_path": "/notes/deploy.md",
            "to_path": "ops/deploy.md",
            "type": "Runbook",
            "title": "Deploy",
            "tags": ["ops"],
        },
    )
    assert answer.status == 200 and set(answer.body) == {"ok", "path", "version", "lint"}
    content = admin.get(f"{KB}/pages/ops/deploy.md").body["content"]
    assert content.endswith("---\n# Deploy notes\n")
    assert 'resource: "agenthub://session/s1/brain/notes/deploy.md"' in content
    assert 'title: "Morning brain /notes/deploy.md"' in content
    assert store.brain_get("s1", "/notes/deploy.md") == b"# Deploy notes\n"  # the source is left as it was
    assert admin.get(f"{KB}/history?op=kb.promote").body["total"] == 1
    assert "kb_promoted" in [r["signal"] for r in store.feed("falcon")]


def test_promote_refusals(admin: Client, pages: Pages) -> None:
    store = pages.runtime.pages
    store.create_session("s2", "elsewhere", "Theirs")
    store.brain_put("s2", "/x.md", b"x")
    store.create_session("s3", "falcon", "Ours")
    store.brain_put("s3", "/bad.md", b"---yaml\ntype: Concept\n---\n")
    body = {"from_session_id": "s2", "from_path": "/x.md", "to_path": "x.md"}
    problem_of(admin.call("POST", f"{KB}/promote", json_body=body), 404, "not_found")
    problem_of(admin.call("POST", f"{KB}/promote", json_body={**body, "from_session_id": "s3"}), 404, "not_found")
    problem_of(
        admin.call("POST", f"{KB}/promote", json_body={**body, "from_session_id": "s3", "from_path": "/bad.md"}),
        400,
        "invalid_argument",
    )
    problem_of(admin.call("POST", f"{KB}/promote", json_body={**body, "extra": 1}), 400, "invalid_argument")


# ---------------------------------------------------------------------- derived numbers
def test_backlinks_lint_and_stats_are_current_straight_after_a_write(admin: Client) -> None:
    put_ok(admin, "index.md", "---\nokf_version: 1\n---\n[a](a.md)\n")
    put_ok(admin, "log.md", "---\ntype: Reference\n---\n")
    put_ok(admin, "a.md", "---\ntype: Concept\ntitle: A\n---\n[b](b.md) [self](a.md)\n```\n[c](c.md)\n```\n")
    put_ok(admin, "b.md", "---\ntype: Concept\ntitle: B\n---\n")
    put_ok(admin, "c.md", "---\ntype: Concept\n---\n`[a](a.md)`\n")
    assert admin.get(f"{KB}/backlinks?path=b.md").body == [{"path": "/fs/a.md", "title": "A"}]
    assert admin.get(f"{KB}/backlinks?path=a.md").body == [{"path": "/fs/index.md", "title": None}]
    findings = admin.get(f"{KB}/lint").body["findings"]
    codes = {(f["code"], f["path"]) for f in findings}
    assert ("orphan_page", "/fs/c.md") in codes and ("orphan_page", "/fs/b.md") not in codes
    assert ("missing_index_entry", "/fs/c.md") in codes and ("missing_index_entry", "/fs/a.md") not in codes
    assert not any(code in {"missing_index", "missing_log"} for code, _ in codes)
    assert all(f["meta"]["path"] == f["path"] for f in findings if "meta" in f)
    put_ok(admin, "d.md", "[c](c.md)")  # invalidates the walk: c is no orphan now
    assert ("orphan_page", "/fs/c.md") not in {(f["code"], f["path"]) for f in admin.get(f"{KB}/lint").body["findings"]}
    stats = admin.get(f"{KB}/stats").body
    assert stats["pages"] == 6 and stats["unverified"] == 6
    assert stats["needs_review"] == {"unverified": 6, "machine_confirmed": 0, "edited_since_review": 0, "total": 6}
    assert stats["last_change_by"] == "human"
    fresh = admin.get(f"{KB}/lint?fresh=1").body
    assert set(fresh) == {"checked_at", "findings"}
    problem_of(admin.get(f"{KB}/backlinks?path=nothing.md"), 404, "not_found")


def test_signals_go_on_the_event_bus_too(admin: Client, pages: Pages) -> None:
    put_ok(admin, "e.md", "e")
    feed = pages.runtime.pages.feed("falcon")
    assert feed[0]["signal"] == "kb_put" and feed[0]["path"] == "/fs/e.md"
    assert json.dumps(feed)  # plain values a project can read back


def test_a_session_brain_value_keeps_its_own_4_mib_limit(pages: Pages) -> None:
    store = pages.runtime.pages
    store.create_session("big", "falcon", "Big")
    store.brain_put("big", "/ok.md", b"a" * (4 * 1024 * 1024))  # over a page's 1 MiB: a brain value may
    with pytest.raises(PayloadTooLarge):
        store.brain_put("big", "/over.md", b"a" * (4 * 1024 * 1024 + 1))


def test_a_post_on_a_page_that_is_neither_review_nor_revert_is_no_route(admin: Client) -> None:
    put_ok(admin, "p.md", "p")
    problem_of(admin.call("POST", f"{KB}/pages/p.md", json_body={}), 404, "not_found")
    problem_of(admin.call("POST", f"{KB}/pages/p.md/publish", json_body={}), 404, "not_found")


# ---------------------------------------------------------------------- the nets (issue 25)
def _used(pages: Pages) -> int:
    return pages.runtime.pages.generation("falcon")[1]


def _stored_blobs(pages: Pages) -> list[str]:
    """The kept versions' objects (not the search snapshot a forget rewrites beside them)."""
    import boto3

    listed = boto3.client("s3").list_objects_v2(Bucket=pages.runtime.env.archive_bucket, Prefix="pages/")
    return sorted(o["Key"] for o in listed.get("Contents", []))


def test_forgetting_a_history_gives_back_the_kept_bytes_it_forgot(admin: Client, pages: Pages) -> None:
    put_ok(admin, "f.md", "one")
    put_ok(admin, "f.md", "two!")
    put_ok(admin, "f.md", "three")
    before, blobs = _used(pages), _stored_blobs(pages)
    answer = admin.call("DELETE", f"{KB}/versions?path=f.md").body
    assert (answer["versions_forgotten"], answer["bytes_forgotten"]) == (2, len("one") + len("two!"))
    assert _used(pages) == before - answer["bytes_forgotten"]
    assert len(_stored_blobs(pages)) == len(blobs) - 2
    assert list(pages.runtime.pages.kept_versions("falcon").values()) == [len("three")]


def test_if_version_absent_on_an_existing_page_refuses_delete_and_review(admin: Client, pages: Pages) -> None:
    first = put_ok(admin, "a.md", PAGE)
    answer = admin.call("DELETE", f"{KB}/pages/a.md?if_version=absent")
    problem_of(answer, 409, "conflict")
    assert answer.body["detail"].endswith(f"current_version={first['version']}")
    answer = admin.call("POST", f"{KB}/pages/a.md/review", json_body={"if_version": "absent"})
    problem_of(answer, 409, "conflict")
    assert answer.body["detail"].endswith(f"current_version={first['version']}")
    assert admin.get(f"{KB}/pages/a.md").body["content"] == PAGE
    assert [r["op"] for r in admin.get(f"{KB}/history").body["rows"]] == ["kb.put"]


def test_a_refused_stale_write_keeps_no_bytes(admin: Client, pages: Pages) -> None:
    first = put_ok(admin, "s.md", "one")
    put_ok(admin, "s.md", "two")
    before, kept, blobs = _used(pages), pages.runtime.pages.kept_versions("falcon"), _stored_blobs(pages)
    problem_of(admin.put("s.md", "stale edit", if_version=first["version"]), 409, "conflict")
    problem_of(admin.put("new.md", "stale edit", if_version=first["version"]), 409, "conflict")
    assert version_of(b"stale edit") not in pages.runtime.pages.kept_versions("falcon")
    assert (_used(pages), pages.runtime.pages.kept_versions("falcon"), _stored_blobs(pages)) == (before, kept, blobs)


def test_a_page_without_a_frontmatter_title_is_titled_by_its_first_heading(admin: Client) -> None:
    put_ok(
        admin, "guides/setup.md", "```\n# not a heading: code\n```\nIntro.\n\n# Setting up the **hub**\n\n## Steps\n"
    )
    put_ok(admin, "guides/titled.md", "---\ntype: Guide\ntitle: Chosen title\n---\n# A heading\n")
    put_ok(admin, "guides/bare.md", "No heading at all.\n")
    rows = {row["path"]: row for row in admin.get(f"{KB}/pages?meta=1&prefix=guides").body["entries"]}
    assert rows["/fs/guides/setup.md"]["title"] == "Setting up the hub"  # frontmatter, else the first # heading
    assert rows["/fs/guides/titled.md"]["title"] == "Chosen title"
    assert rows["/fs/guides/bare.md"]["title"] is None  # the reader names it by its file
