"""The console's sections past the shell, in a real browser against the local stack, on the demo
project ``falcon``: search and an item's evidence, a conflict resolved and reopened, an export made
and downloaded (the digest on screen is the file's SHA-256), an import by path watched to the end,
an upload after preflight's count, the feed synced, a change queued and another dismissed, one dead
letter replayed after a fix and another discarded with a reason — axe-core on each screen."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Console
from tests.e2e.test_feed import REF, put_source, settle
from tests.localstack import REAL_DOCS, LocalStack, bearer

pytestmark = pytest.mark.e2e


@pytest.fixture
def admin(stack: LocalStack) -> Iterator[dict[str, str]]:
    """The admin's headers; the study settings a test changes are put back after it."""
    headers = bearer(stack.admin_token)
    status = httpx.get(stack.url + "/knowledge/status", headers=headers, timeout=30.0).json()["data"]
    yield headers
    with httpx.Client(base_url=stack.url, timeout=30.0) as http:
        settle(http, headers, status["auto_study"], status["revision_study"])


def signed_in_on_falcon(console: Console, section: str) -> None:
    console.sign_in(console.stack.admin_token)
    console.pick_project(REF)
    expect(console.page.get_by_text(f"Reads knowledge base {REF}")).to_be_visible()
    console.section(section)


def test_search_retrieve_and_an_items_evidence(console: Console, stack: LocalStack) -> None:
    page = console.page
    signed_in_on_falcon(console, "Search")

    page.get_by_label("Words").fill("launch")
    page.get_by_role("button", name="Search", exact=True).click()

    expect(page.get_by_text(re.compile(r"^\d+ statements match\."))).to_be_visible()
    expect(
        page.get_by_role("combobox", name="Type").get_by_role("option", name=re.compile(r"\(\d+\)$")).first
    ).to_be_attached()
    page.get_by_role("button", name=re.compile("^Open ki_")).first.click()
    item = page.get_by_role("region", name=re.compile("^Item: "))
    expect(item.get_by_role("heading", name="Evidence")).to_be_visible()
    expect(item.get_by_role("listitem").first).to_be_visible()
    console.assert_accessible("search-item")

    page.get_by_label("Question").fill("launch date")
    page.get_by_role("button", name="Retrieve").click()

    rendered = page.get_by_label("Rendered context")
    expect(rendered).to_contain_text("Knowledge for: launch date")
    answer = httpx.post(
        stack.url + "/knowledge/retrieve",
        headers=bearer(stack.admin_token),
        params={"project": REF},
        json={"query": "launch date", "top_k": 8},
        timeout=30.0,
    ).json()["data"]
    assert rendered.text_content() == answer["rendered"]  # verbatim
    console.assert_accessible("search")


def test_resolve_and_reopen_a_conflict_with_notes(console: Console, stack: LocalStack) -> None:
    page = console.page
    headers = bearer(stack.admin_token)
    [conflict] = [
        c
        for c in httpx.get(
            stack.url + "/knowledge/conflicts", headers=headers, params={"project": REF, "status": "all"}, timeout=30.0
        ).json()["data"]["conflicts"]
        if c["title"] == "Project Falcon launch date"
    ]
    if conflict["status"] != "open":  # an earlier test on this stack decided it
        httpx.post(
            f"{stack.url}/knowledge/conflicts/{conflict['conflict_id']}/reopen",
            headers=headers,
            params={"project": REF},
            timeout=30.0,
        )
    signed_in_on_falcon(console, "Curation")
    card = page.get_by_role("listitem", name="Conflict Project Falcon launch date")
    expect(card).to_be_visible()
    # the winner preselected is FORAGER's suggestion (side 2 here), never simply side 1
    assert (
        conflict["suggested_winner_id"] and conflict["suggested_winner_id"] != conflict["sides"][0]["knowledge_id"]
    ), conflict
    expect(card.get_by_role("combobox", name="Winner")).to_have_value(conflict["suggested_winner_id"])
    console.assert_accessible("curation")

    card.get_by_role("combobox", name="Decision").select_option("keep_both")
    card.get_by_label("Notes").fill("both dates stand until the supplier confirms")
    card.get_by_role("button", name="Resolve").click()

    expect(page.get_by_role("status").filter(has_text="Resolved Project Falcon launch date.")).to_be_visible()
    decided = httpx.get(
        stack.url + "/knowledge/conflicts", headers=headers, params={"project": REF, "status": "all"}, timeout=30.0
    )
    [row] = [c for c in decided.json()["data"]["conflicts"] if c["conflict_id"] == conflict["conflict_id"]]
    assert row["status"] != "open" and row["decision"]["action"] == "keep_both"

    page.get_by_role("combobox", name="Show").first.select_option("all")
    page.get_by_role("listitem", name="Conflict Project Falcon launch date").get_by_role(
        "button", name="Reopen"
    ).click()

    expect(page.get_by_role("status").filter(has_text="Reopened Project Falcon launch date.")).to_be_visible()
    reopened = httpx.get(
        stack.url + "/knowledge/conflicts", headers=headers, params={"project": REF, "status": "open"}, timeout=30.0
    )
    assert conflict["conflict_id"] in [c["conflict_id"] for c in reopened.json()["data"]["conflicts"]]


def test_the_commercial_gate_s_402_is_shown_as_what_it_is(console: Console, stack: LocalStack) -> None:
    """The gate itself is the server's (tests/unit/test_curation_routes.py);
    here the console shows its answer — the API's own 402 envelope, sent for the act — as a
    refusal of the subscription, with the API's sentence, not as a failure."""
    page = console.page
    sentence = "This colony's subscription does not include forager.knowledge.curate."
    envelope = {"success": False, "message": sentence, "data": None, "code": "payment_required"}
    page.route(
        re.compile(r".*/knowledge/conflicts/[^/]+/resolve.*"),
        lambda route: route.fulfill(status=402, content_type="application/json", body=json.dumps(envelope)),
    )
    signed_in_on_falcon(console, "Curation")
    page.get_by_role("combobox", name="Show").first.select_option("all")
    card = page.get_by_role("listitem", name="Conflict Project Falcon launch date")
    card.get_by_role("combobox", name="Decision").select_option("keep_both")
    card.get_by_role("button", name="Resolve").click()
    alert = page.get_by_role("alert").filter(has_text="Not included in this colony's subscription (402)")
    expect(alert).to_contain_text(sentence)
    console.assert_accessible("curation")


def test_make_an_export_and_download_it_with_its_digest_on_screen(console: Console) -> None:
    page = console.page
    signed_in_on_falcon(console, "Exports")

    page.get_by_role("combobox", name="Format").select_option("jsonl")
    page.get_by_role("button", name="Make export").click()
    notice = page.get_by_role("status").filter(has_text=re.compile(r"^Export exp_\w+ started"))
    expect(notice).to_be_visible()
    export_id = re.search(r"exp_\w+", notice.inner_text() or "")
    assert export_id is not None
    row = page.get_by_role("row").filter(has=page.get_by_role("button", name=f"Download {export_id.group(0)}"))
    expect(row).to_contain_text("completed", timeout=60_000)  # the list reads itself again while it runs
    expect(row.get_by_role("button", name=f"Copy SHA-256 of {export_id.group(0)}")).to_be_visible()
    digest = row.locator("td[data-label='SHA-256'] code").get_attribute("title")  # shortened on screen
    assert digest and re.fullmatch(r"[0-9a-f]{64}", digest), digest
    assert console.broken_words() == []
    console.assert_accessible("exports")

    with page.expect_download() as download:
        row.get_by_role("button", name=f"Download {export_id.group(0)}").click()

    saved = download.value.path()
    assert hashlib.sha256(Path(saved).read_bytes()).hexdigest() == digest
    # one click, one hand-over: one knowledge_export_downloaded event for it
    events = httpx.get(
        console.stack.url + "/knowledge/events",
        headers=bearer(console.stack.admin_token),
        params={"project": REF, "limit": 100},
        timeout=30.0,
    ).json()["data"]["events"]
    downloaded = [
        e
        for e in events
        if e["event_type"] == "knowledge_export_downloaded" and e["payload"].get("record") == export_id.group(0)
    ]
    assert len(downloaded) == 1, downloaded


def test_import_by_path_and_watch_the_job_finish(console: Console) -> None:
    page = console.page
    signed_in_on_falcon(console, "Sources")

    page.get_by_label("Workspace paths, one a line").fill("docs/procedures")
    page.get_by_role("button", name="Import", exact=True).click()

    expect(page.get_by_role("status").filter(has_text="Queued: Import: docs/procedures.")).to_be_visible()
    # the job is named by its kind and what it was given; its id one click away (Copy, or on hover)
    job = page.get_by_role("listitem", name="Import: docs/procedures").first  # newest first
    expect(job.get_by_role("heading", name="Import: docs/procedures")).to_be_visible()
    expect(job).to_contain_text("completed", timeout=60_000)  # the list reads itself again while it runs
    expect(job.get_by_role("progressbar")).to_have_attribute("value", "1")
    expect(job.get_by_role("button", name="Copy the id of Import: docs/procedures")).to_be_visible()
    expect(job.locator("code[title^='job_']")).to_have_count(1)
    console.assert_accessible("sources")


def test_a_source_opens_to_its_text_and_chunks_and_evidence_stands_in_its_context(
    console: Console, stack: LocalStack
) -> None:
    # Given a folder of real documentation in the workspace, of this test's own (a copy the engine
    # had read already would be a byte-for-byte duplicate), that the engine has read
    folder = f"browser-{uuid.uuid4().hex[:8]}"
    shutil.copytree(REAL_DOCS, stack.workspace / folder / "handbook")
    for page in (stack.workspace / folder).rglob("*.md"):  # bytes of its own: not a copy of another import
        page.write_text(page.read_text() + f"\n<!-- {folder} -->\n")
    with httpx.Client(base_url=stack.url, headers=bearer(stack.admin_token), timeout=30) as http:
        job = http.post("/knowledge/jobs", params={"project": REF}, json={"paths": [folder]}).json()["data"]
        deadline = time.monotonic() + 60
        while not http.get(f"/knowledge/jobs/{job['job_id']}", params={"project": REF}).json()["data"]["terminal"]:
            assert time.monotonic() < deadline, "the import did not finish"
            time.sleep(0.2)
    page = console.page
    signed_in_on_falcon(console, "Sources")
    # When a person opens one of its sources
    page.get_by_role("button", name=f"Open {folder}/handbook/getting-started.md").click()
    source = page.get_by_role("region", name=f"{folder}/handbook/getting-started.md")
    # Then they read what the engine extracted and the chunks it cut, by their headings
    expect(source.get_by_text("Getting started", exact=True).first).to_be_visible()
    source.get_by_text("Extracted text").click()
    expect(source.get_by_label("Extracted text")).to_contain_text("pip install harbor-docs")
    console.assert_accessible("sources-source")
    # and an item's evidence opens where it stands in that text, the excerpt marked
    console.section("Search")
    page.get_by_label("Words").fill("the setup guide")
    page.get_by_role("button", name="Search", exact=True).click()
    page.get_by_role("button", name=re.compile("^Open ki_")).first.click()
    item = page.get_by_role("region", name=re.compile("^Item: "))
    item.get_by_text("In context").first.click()
    excerpt = "Then read the setup guide and changing the colors."
    expect(item.locator("mark").first).to_have_text(excerpt)  # what a reader reads: the links' words, no markup
    expect(item.locator(".in-context").first).to_contain_text("pip install harbor-docs")  # the words before it
    console.assert_accessible("search-evidence-in-context")


def test_upload_after_preflights_count(console: Console, tmp_path: Path) -> None:
    page = console.page
    signed_in_on_falcon(console, "Sources")
    files = [tmp_path / "harbour.md", tmp_path / "tides.md"]
    for n, path in enumerate(files):
        path.write_text(f"# {path.stem}\n" + "words " * (100 * (n + 1)))
    expect(page.get_by_role("button", name="Upload", exact=True)).to_be_disabled()

    page.get_by_label("Files").set_input_files([str(path) for path in files])
    page.get_by_role("button", name="Check with FORAGER").click()

    expect(page.get_by_role("status").filter(has_text="Admitted: 2 of 2 entries")).to_be_visible()
    page.get_by_role("button", name="Upload", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Queued: Upload: harbour.md, tides.md.")).to_be_visible()
    job = page.get_by_role("listitem", name="Upload: harbour.md, tides.md").first
    expect(job).to_contain_text("by ")  # who queued it
    expect(job.get_by_role("button", name="Copy the id of Upload: harbour.md, tides.md")).to_be_visible()
    job.scroll_into_view_if_needed()
    console.assert_accessible("sources-job-named")


def test_a_batch_over_the_inline_limit_goes_through_an_upload_session(console: Console, tmp_path: Path) -> None:
    """Over 4 MB the browser PUTs each file straight to its presigned URL in the staging bucket
    (the one origin the console's policy adds; the bucket's CORS rule admits the API's origin),
    then preflight and the commit name the session."""
    page = console.page
    signed_in_on_falcon(console, "Sources")
    big = tmp_path / "almanac.md"
    big.write_text("# Almanac\n" + ("tide tables and harbour notes " * 130_000))  # ~3.8 MB
    small = tmp_path / "notes.md"
    small.write_text("# Notes\nA short page.\n")
    page.get_by_label("Files").set_input_files([str(big), str(small)])
    expect(page.get_by_text("sent through an upload session")).to_be_visible()
    page.get_by_role("button", name="Check with FORAGER").click()
    expect(page.get_by_role("status").filter(has_text="Admitted: 2 of 2 entries")).to_be_visible()
    page.get_by_role("button", name="Upload", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Queued: Upload: almanac.md, notes.md.")).to_be_visible()


def test_sync_the_feed_and_read_what_was_published(console: Console, stack: LocalStack, admin: dict[str, str]) -> None:
    with httpx.Client(base_url=stack.url, timeout=30.0) as http:
        settle(http, admin, "suggest", "suggest")
    put_source(stack)
    page = console.page
    signed_in_on_falcon(console, "What FORAGER has published")

    page.get_by_role("button", name="Sync").click()

    expect(page.get_by_role("status").filter(has_text=re.compile(r"\S"))).to_be_visible()
    head = page.get_by_role("region", name="Head")
    expect(head).to_contain_text(re.compile(r"Update \d+: "))
    expect(page.get_by_role("region", name="Inbox")).to_contain_text(re.compile(r"update \d+"))
    watermark = page.get_by_role("region", name="Watermarks").get_by_role("row").nth(1)  # the live stream's
    expect(watermark).to_contain_text(re.compile(r"\d+\s*(current|ahead|advancing|\w+)"))
    console.assert_accessible("published")


def test_queue_one_change_and_dismiss_another(console: Console, stack: LocalStack, admin: dict[str, str]) -> None:
    with httpx.Client(base_url=stack.url, timeout=30.0) as http:
        settle(http, admin, "suggest", "suggest")
        first, second = put_source(stack), put_source(stack)
        synced = http.post("/knowledge/feed/sync", headers=admin, params={"project": REF})
        assert synced.status_code == 200, synced.text
    page = console.page
    console.sign_in(stack.admin_token)
    console.pick_project(REF)
    expect(page.get_by_role("link", name=re.compile(r"^Knowledge changes \d+ open changes$"))).to_be_visible()
    console.section("Knowledge changes")
    console.assert_accessible("knowledge-changes")

    page.get_by_role("button", name=f"Queue {first['name']}").click()
    expect(page.get_by_role("status").filter(has_text=f"Queued {first['name']}.")).to_be_visible()
    page.get_by_role("button", name=f"Dismiss {second['name']}").click()
    expect(page.get_by_role("status").filter(has_text=f"Dismissed {second['name']}.")).to_be_visible()

    findings = httpx.get(
        stack.url + "/knowledge/changes", headers=admin, params={"project": REF, "status": "all"}, timeout=30.0
    ).json()["data"]["findings"]
    by_name = {f["source_name"]: f["status"] for f in findings}
    assert by_name[first["name"]] != "open" and by_name[second["name"]] != "open"
    assert by_name[first["name"]] != by_name[second["name"]]


def test_replay_one_dead_letter_after_a_fix_and_discard_another(
    console: Console, stack: LocalStack, admin: dict[str, str], move_clock: Callable[[int], None]
) -> None:
    base = "/knowledge/feed/dead-letters"
    with httpx.Client(base_url=stack.url, timeout=60) as http:
        settle(http, admin, "suggest", "suggest")
        assert http.post("/knowledge/feed/sync", headers=admin, params={"project": REF}).status_code == 200
        bad = httpx.post(
            f"{stack.control_url}/projects/{REF}/feed/malformed", json={"kind": "header"}, timeout=30.0
        ).json()
        stack.fault("5xx", path_prefix=f"/api/projects/{REF}/sources")
        revision = put_source(stack)
        assert http.post("/knowledge/feed/sync", headers=admin, params={"project": REF}).status_code == 200
        move_clock(25 * 3600)
        assert http.post("/knowledge/feed/sync", headers=admin, params={"project": REF}).status_code == 200
        stack.fault(None)
        entries = http.get(base, headers=admin, params={"project": REF}).json()["data"]["entries"]
    by_event = {entry["event_id"]: entry for entry in entries}
    refused, exhausted = by_event[bad["event_id"]], by_event[revision["event_id"]]
    page = console.page
    console.sign_in(stack.admin_token)
    console.pick_project(REF)
    expect(page.get_by_role("link", name=re.compile(r"^Dead letters \d+ dead letters waiting$"))).to_be_visible()
    console.section("Dead letters")
    console.assert_accessible("dead-letters")

    fixed = page.get_by_role("form", name=f"Replay after fix {exhausted['dead_letter_id']}")
    fixed.get_by_role("combobox", name="What was fixed").select_option("fixed_engine")
    fixed.get_by_label("The change").fill("the engine answers its sources again")
    fixed.get_by_role("button", name="Replay after fix").click()
    expect(page.get_by_role("status").filter(has_text="rearmed")).to_be_visible()

    gone = page.get_by_role("form", name=f"Discard {refused['dead_letter_id']}")
    gone.get_by_role("combobox", name="Reason to discard").select_option("sender_error")
    gone.get_by_role("button", name="Discard").click()
    expect(gone).to_contain_text('the reason "sender_error" is recorded')
    gone.get_by_role("button", name="Discard it").click()
    expect(page.get_by_role("status").filter(has_text="Discarded")).to_be_visible()

    after = httpx.get(stack.url + base, headers=admin, params={"project": REF, "state": "all"}, timeout=30.0).json()[
        "data"
    ]
    states = {entry["dead_letter_id"]: entry for entry in after["entries"]}
    assert states[refused["dead_letter_id"]]["resolution"]["reason"] == "sender_error"
    assert states[exhausted["dead_letter_id"]]["resolution"]["change"] == "the engine answers its sources again"
