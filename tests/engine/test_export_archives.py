"""Exports are real archives of the knowledge base (docs/upstream-contract.md, "Exports"; issue 40).

Every base here is made from markdown the test writes, ingested by path through the engine's API;
its people and its disagreement are what the pipeline found in them.
Each archive is taken as a client takes it: started, read until completed, downloaded, its SHA-256
checked against the digest beside the bytes and the row, then opened with zipfile, gzip or tarfile.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, strategies as st

from local_engine.double import Double, start_double
from local_engine.exports import archives, jobs as sim_exports, jsonl
from local_engine.exports.members import Member

TOKEN = "export-archives-token"
MIB = 1024 * 1024

PLAN = """# Launch plan

Project Falcon launches on April 10, 2026. Robert Smith owns the launch checklist.

## Risks

The supplier must deliver the parts by March. Ada Lovelace approved the mooring schedule for Project Falcon.

```
a fence in the text: ```
```
"""
HARBOUR = """# Harbour notes

The ferry leaves the pier at seven every morning. The harbour master keeps the tide tables.
Project Falcon launches on May 2, 2026, after the harbour works. Bob Smith checks the mooring lines.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Double]:
    with start_double(port=0, control_port=0, token=TOKEN, data_dir=tmp_path_factory.mktemp("engine")) as sim:
        yield sim


@pytest.fixture
def api(engine: Double) -> Iterator[httpx.Client]:
    settings(engine, build_seconds=0, padding_bytes=0)
    with httpx.Client(base_url=engine.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as client:
        yield client
    settings(engine, build_seconds=0.2, padding_bytes=0)


def settings(engine: Double, **values: Any) -> None:
    httpx.put(f"{engine.control_url}/exports/settings", json=values, timeout=30.0).raise_for_status()


def post(api: httpx.Client, path: str, body: Any) -> Any:
    answer = api.post(path, json=body, headers={"Idempotency-Key": os.urandom(8).hex()})
    assert answer.status_code in (200, 201, 202), answer.text
    return answer.json()


@pytest.fixture
def base(api: httpx.Client, tmp_path: Path) -> str:
    """A knowledge base of two markdown documents, ingested by path."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "plan.md").write_text(PLAN)
    (folder / "harbour.md").write_text(HARBOUR)
    ref = str(post(api, "/api/projects", {"name": "Launch docs"})["project_ref"])
    job = post(api, f"/api/projects/{ref}/jobs", {"paths": [str(folder)]})
    deadline = time.monotonic() + 30
    while not api.get(f"/api/projects/{ref}/jobs/{job['job_id']}").json()["terminal"]:
        assert time.monotonic() < deadline, "the job did not finish"
        time.sleep(0.02)
    return ref


def export(api: httpx.Client, ref: str, fmt: str, **options: Any) -> dict[str, Any]:
    """An export started and read until it is no longer running."""
    row: dict[str, Any] = post(api, f"/api/projects/{ref}/exports", {"format": fmt, "options": options})
    assert row["status"] == "running" and row["sha256"] is None  # answered as it starts, however fast it builds
    deadline = time.monotonic() + 60
    while row["status"] == "running":
        assert time.monotonic() < deadline, "the export was not built in time"
        time.sleep(0.02)
        row = api.get(f"/api/exports/{row['export_id']}").json()
    assert row["status"] == "completed", row
    return row


def download(api: httpx.Client, row: dict[str, Any]) -> bytes:
    answer = api.get(f"/api/exports/{row['export_id']}/download")
    assert answer.status_code == 200, answer.text
    data = answer.content
    assert hashlib.sha256(data).hexdigest() == answer.headers["X-Export-Sha256"] == row["sha256"]
    assert len(data) == row["size_bytes"] == int(answer.headers["Content-Length"])
    return data


def served(engine: Double, ref: str, *, historical: bool = False) -> set[str]:
    hidden = "" if historical else " AND status NOT IN ('Superseded', 'Archived')"
    rows = engine.state.store.rows(f"SELECT knowledge_id FROM statements WHERE ref = ? AND indexed = 1{hidden}", ref)  # noqa: S608
    return {str(r[0]) for r in rows}


def jsonl_records(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(text) for text in gzip.decompress(data).decode("utf-8").splitlines()]


def of_type(records: list[dict[str, Any]], record_type: str) -> list[dict[str, Any]]:
    return [r for r in records if r["record_type"] == record_type]


def package(data: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    return json.loads(files["anthill-package.json"]), files


def ids(lines: bytes, key: str) -> set[str]:
    return {json.loads(text)[key] for text in lines.decode("utf-8").splitlines()}


# ---------------------------------------------------------------- the three formats
def test_an_obsidian_vault_holds_a_note_a_statement_linked_to_its_sources(
    api: httpx.Client, engine: Double, base: str
) -> None:
    row = export(api, base, "obsidian", vault_name="Launch vault")
    assert row["file_name"].endswith(".zip") and row["file_name"].startswith("Launch vault export ")
    vault = zipfile.ZipFile(io.BytesIO(download(api, row)))
    notes = {n: vault.read(n).decode("utf-8") for n in vault.namelist()}
    statements = {n.removeprefix("Statements/").removesuffix(".md") for n in notes if n.startswith("Statements/")}
    assert statements == served(engine, base) and len(statements) >= 5
    sources = {s["source_id"]: s for s in api.get(f"/api/projects/{base}/sources").json()["sources"]}
    for knowledge_id in statements:
        item = api.get(f"/api/knowledge/{knowledge_id}").json()
        note = notes[f"Statements/{knowledge_id}.md"]
        assert note.startswith("---\n") and f'knowledge_id: "{knowledge_id}"' in note
        assert item["statement"] in note
        (link,) = api.get(f"/api/knowledge/{knowledge_id}/evidence").json()["evidence"]
        assert f"[[{link['source_id']}|{link['source_name']}]], {link['location']}" in note
        assert f"> {link['excerpt']}" in note
    backlinks = {target for s in sources for target in notes_linked(notes[f"Sources/{s}.md"])}
    assert backlinks == statements  # each source's note links back to every statement it supports
    assert notes["Index.md"].startswith("# Launch vault\n")
    assert all(info.date_time == (1980, 1, 1, 0, 0, 0) for info in vault.infolist())
    entities, conflicts = held(engine, base)
    assert (entities, conflicts) == (3, 1)  # Robert Smith, Ada Lovelace, Project Falcon; the launch date
    assert row["stats"] == {"sources": 2, "chunks": 0, "statements": len(statements), "evidence": len(statements),
                            "entities": entities, "conflicts": conflicts}  # fmt: skip


def notes_linked(note: str) -> list[str]:
    """The targets of a note's wikilinks."""
    return [part.split("|", 1)[0] for part in note.split("[[")[1:]]


def test_a_jsonl_export_is_one_record_a_line_each_with_its_record_type(
    api: httpx.Client, engine: Double, base: str
) -> None:
    row = export(api, base, "jsonl")
    assert row["file_name"].endswith(".jsonl.gz")
    records = jsonl_records(download(api, row))
    manifest = records[0]
    assert (manifest["record_type"], manifest["project_ref"], manifest["stats"]) == ("manifest", base, row["stats"])
    assert {r["record_type"] for r in records[1:]} == {"source", "statement", "evidence", "entity", "conflict"}
    statements = of_type(records, "statement")
    assert {r["knowledge_id"] for r in statements} == served(engine, base)
    evidence = {r["evidence_id"]: r for r in of_type(records, "evidence")}
    for item in statements:
        (link,) = (evidence[e] for e in item["evidence_ids"])
        assert link["knowledge_id"] == item["knowledge_id"] and link["excerpt"] and not link["missing_excerpt"]
        assert item["statement"] in " ".join(link["excerpt"].split())
    assert [r["knowledge_id"] for r in statements] == sorted(r["knowledge_id"] for r in statements)
    assert all("text" not in s for s in of_type(records, "source"))  # no source text without include_sources
    assert row["stats"]["statements"] == len(statements) and row["stats"]["sources"] == 2


def test_an_anthill_package_is_version_7_and_names_the_revision_it_was_cut_from(
    api: httpx.Client, engine: Double, base: str
) -> None:
    row = export(api, base, "anthill")
    assert row["file_name"].endswith(".anthill.tar.gz")
    manifest, files = package(download(api, row))
    head = api.get(f"/api/projects/{base}/revisions/head").json()
    assert (
        manifest["package_version"] == 7 == api.get("/api/capabilities").json()["exports"]["anthill"]["package_version"]
    )
    revision = manifest["revision"]
    assert set(revision) == {"id", "publication_sequence", "logical_content_hash", "publication_status",
                             "producer_instance_id", "producer_generation", "published_at"}  # fmt: skip
    assert (revision["id"], revision["publication_sequence"], revision["logical_content_hash"]) == (
        head["revision_id"], head["publication_sequence"], head["logical_content_hash"])  # fmt: skip
    assert revision["producer_instance_id"] == api.get("/api/capabilities").json()["instance_id"]
    assert row["revision_id"] == head["revision_id"]
    assert next(iter(files)) == "anthill-package.json"  # the manifest first
    for entry in manifest["files"]:
        data = files[entry["path"]]
        assert (len(data), hashlib.sha256(data).hexdigest(), data.count(b"\n")) == (
            entry["bytes"], entry["sha256"], entry["records"])  # fmt: skip
    assert ids(files["records/statements.jsonl"], "knowledge_id") == served(engine, base)
    assert "records/chunks.jsonl" not in files
    assert manifest["stats"] == row["stats"]


def test_an_export_runs_then_completes_and_its_completion_is_on_the_feed_with_its_digest(
    api: httpx.Client, engine: Double, base: str
) -> None:
    settings(engine, build_seconds=0.4)
    started = post(api, f"/api/projects/{base}/exports", {"format": "anthill"})
    assert (started["status"], started["sha256"], started["size_bytes"], started["stats"]) == (
        "running",
        None,
        None,
        {},
    )
    running = api.get(f"/api/exports/{started['export_id']}/download")
    assert (running.status_code, running.json()["error"]["code"]) == (409, "not_ready")
    time.sleep(0.5)
    row = sim_exports.book(engine.state).wait(started["export_id"]).to_json()
    assert row["status"] == "completed" and row["finished_at"]
    envelope = api.get(f"/api/projects/{base}/feed").json()["envelopes"][-1]
    assert envelope["event_type"] == "knowledge.export.completed"
    assert envelope["payload"] == {
        "revision_id": row["revision_id"],
        "export_id": row["export_id"],
        "export_format": "anthill_package",
        "package_digest": f"sha256:{row['sha256']}",
    }
    assert package(download(api, row))[0]["revision"]["id"] == envelope["payload"]["revision_id"]


def test_the_control_ports_export_is_a_real_package_whose_envelope_names_its_digest(
    api: httpx.Client, engine: Double, base: str
) -> None:
    envelope = httpx.post(f"{engine.control_url}/projects/{base}/exports", timeout=30.0).json()
    payload = envelope["payload"]
    row = api.get(f"/api/exports/{payload['export_id']}").json()
    assert (row["status"], row["format"], f"sha256:{row['sha256']}") == ("completed", "anthill",
                                                                          payload["package_digest"])  # fmt: skip
    manifest, _ = package(download(api, row))
    assert manifest["revision"]["id"] == payload["revision_id"] == row["revision_id"]


def test_a_base_with_no_revision_exports_with_none_and_publishes_nothing(api: httpx.Client, engine: Double) -> None:
    ref = str(post(api, "/api/projects", {"name": "Empty"})["project_ref"])
    row = export(api, ref, "anthill")
    manifest, files = package(download(api, row))
    assert (manifest["revision"], row["revision_id"], files["records/statements.jsonl"]) == (None, None, b"")
    assert api.get(f"/api/projects/{ref}/feed").json()["envelopes"] == []
    refused = httpx.post(f"{engine.control_url}/projects/{ref}/exports", timeout=30.0)
    assert refused.status_code == 409


# ---------------------------------------------------------------- options, stats, determinism
def test_sources_texts_only_with_include_sources_and_chunks_only_with_include_chunks(
    api: httpx.Client, engine: Double, base: str
) -> None:
    plain = jsonl_records(download(api, export(api, base, "jsonl")))
    full_row = export(api, base, "jsonl", include_sources=True, include_chunks=True)
    full = jsonl_records(download(api, full_row))
    texts = {s["name"]: s["text"] for s in of_type(full, "source")}
    assert texts == {"docs/plan.md": PLAN, "docs/harbour.md": HARBOUR}
    assert of_type(plain, "chunk") == [] and all("text" not in s for s in of_type(plain, "source"))
    chunks = of_type(full, "chunk")
    stored = engine.state.store.value("SELECT COUNT(*) FROM chunks WHERE ref = ?", base)
    assert len(chunks) == stored == full_row["stats"]["chunks"] > 0
    assert all(texts[next(s["name"] for s in of_type(full, "source") if s["source_id"] == c["source_id"])]
               [c["char_start"]:c["char_end"]] == c["text"] for c in chunks)  # fmt: skip
    vault = zipfile.ZipFile(io.BytesIO(download(api, export(api, base, "obsidian", include_sources=True))))
    plan = next(
        vault.read(n).decode() for n in vault.namelist() if n.startswith("Sources/") and b"plan" in vault.read(n)
    )
    assert "## Text\n\n````text\n" + PLAN + "\n````\n" in plan  # a fence longer than the text's own
    bare = zipfile.ZipFile(io.BytesIO(download(api, export(api, base, "obsidian"))))
    assert not any("## Text" in bare.read(n).decode() for n in bare.namelist())
    _, files = package(download(api, export(api, base, "anthill", include_chunks=True)))
    assert len(files["records/chunks.jsonl"].splitlines()) == stored


def test_superseded_and_archived_statements_only_with_include_superseded(
    api: httpx.Client, engine: Double, base: str
) -> None:
    current = sorted(served(engine, base))
    with engine.state.store.transaction() as db:
        db.execute("UPDATE statements SET status = 'Superseded' WHERE knowledge_id = ?", (current[0],))
        db.execute("UPDATE statements SET status = 'Archived', review_status = 'rejected' WHERE knowledge_id = ?",
                   (current[1],))  # fmt: skip
    kept = set(current[2:])
    for fmt in ("jsonl", "anthill", "obsidian"):
        without, with_history = export(api, base, fmt), export(api, base, fmt, include_superseded=True)
        assert (without["stats"]["statements"], with_history["stats"]["statements"]) == (len(kept), len(current))
        assert statement_ids(fmt, download(api, without)) == kept
        assert statement_ids(fmt, download(api, with_history)) == set(current)


def statement_ids(fmt: str, data: bytes) -> set[str]:
    if fmt == "jsonl":
        return {r["knowledge_id"] for r in of_type(jsonl_records(data), "statement")}
    if fmt == "anthill":
        return ids(package(data)[1]["records/statements.jsonl"], "knowledge_id")
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    return {n.removeprefix("Statements/").removesuffix(".md") for n in names if n.startswith("Statements/")}


def test_the_same_knowledge_gives_the_same_bytes(api: httpx.Client, base: str) -> None:
    for fmt in ("obsidian", "jsonl", "anthill"):
        first, second = export(api, base, fmt, include_sources=True), export(api, base, fmt, include_sources=True)
        assert first["export_id"] != second["export_id"]
        assert first["sha256"] == second["sha256"] and first["size_bytes"] == second["size_bytes"]
        assert export(api, base, fmt)["sha256"] != first["sha256"]  # other options, other bytes


# ---------------------------------------------------------------- people and disagreements
def people_and_a_disagreement(engine: Double, ref: str) -> dict[str, str]:
    """What the pipeline found in the base's two documents: Robert Smith (Bob Smith merged in on
    its own), Ada Lovelace linked to Project Falcon, and the launch date the two disagree on."""
    store = engine.state.store

    def one(sql: str, *args: str) -> str:
        (row,) = store.rows(sql, ref, *args)
        return str(row[0])

    def statement(words: str) -> str:
        return one("SELECT knowledge_id FROM statements WHERE ref = ? AND instr(statement, ?) > 0", words)

    def entity(name: str) -> str:
        return one("SELECT entity_id FROM entities WHERE ref = ? AND name = ?", name)

    return {
        "owner": statement("Robert Smith owns"),
        "approver": statement("Ada Lovelace"),
        "launch": statement("April 10"),
        "other": statement("May 2"),
        "robert": entity("Robert Smith"),
        "ada": entity("Ada Lovelace"),
        "bob": entity("Bob Smith"),
        "falcon": entity("Project Falcon"),
        "conflict": one("SELECT conflict_id FROM conflicts WHERE ref = ? AND type = 'contradiction'"),
    }


def held(engine: Double, ref: str) -> tuple[int, int]:
    """(entities not merged away, disagreements) of the base, as the store holds them."""
    store = engine.state.store
    entities = store.value("SELECT COUNT(*) FROM entities WHERE ref = ? AND merged_into IS NULL", ref)
    return int(entities), int(store.value("SELECT COUNT(*) FROM conflicts WHERE ref = ?", ref))


def test_a_vaults_statements_link_their_people_and_disagreements_and_those_link_back(
    api: httpx.Client, engine: Double, base: str
) -> None:
    the = people_and_a_disagreement(engine, base)
    row = export(api, base, "obsidian")
    vault = zipfile.ZipFile(io.BytesIO(download(api, row)))
    note = {n: vault.read(n).decode() for n in vault.namelist()}
    assert f"[[{the['robert']}|Robert Smith]]" in note[f"Statements/{the['owner']}.md"]
    assert f"[[{the['conflict']}|Project Falcon launches]]" in note[f"Statements/{the['launch']}.md"]
    robert = note[f"Entities/{the['robert']}.md"]
    assert f"[[{the['owner']}|" in robert and 'aliases: ["Robert Smith", "Bob Smith"]' in robert
    assert f"approved [[{the['falcon']}|Project Falcon]]" in note[f"Entities/{the['ada']}.md"]
    conflict = note[f"Conflicts/{the['conflict']}.md"]
    assert f"1. [[{the['other']}|" in conflict and f"2. [[{the['launch']}|" in conflict  # harbour.md read first
    assert f"Entities/{the['bob']}.md" not in note  # merged into Robert: only with include_superseded
    assert f"[[{the['robert']}|Robert Smith]]" in note["Index.md"] and f"[[{the['conflict']}|" in note["Index.md"]
    assert (row["stats"]["entities"], row["stats"]["conflicts"]) == held(engine, base)
    merged = zipfile.ZipFile(io.BytesIO(download(api, export(api, base, "obsidian", include_superseded=True))))
    assert f"Merged into [[{the['robert']}|Robert Smith]]" in merged.read(f"Entities/{the['bob']}.md").decode()


def test_jsonl_and_the_package_carry_people_and_disagreements(api: httpx.Client, engine: Double, base: str) -> None:
    the = people_and_a_disagreement(engine, base)
    records = jsonl_records(download(api, export(api, base, "jsonl")))
    entities = {r["entity_id"]: r for r in of_type(records, "entity")}
    kept = {str(r[0]) for r in engine.state.store.rows(
        "SELECT entity_id FROM entities WHERE ref = ? AND merged_into IS NULL", base)}  # fmt: skip
    assert set(entities) == kept and {the["ada"], the["robert"], the["falcon"]} <= kept
    assert the["owner"] in entities[the["robert"]]["knowledge_ids"]
    assert {"alias": "Bob Smith", "kind": "name", "confidence": 0.8} in entities[the["robert"]]["aliases"]
    assert entities[the["ada"]]["relationships"][0]["to_entity"] == the["falcon"]
    (conflict,) = of_type(records, "conflict")
    assert [s["knowledge_id"] for s in conflict["sides"]] == [the["other"], the["launch"]]
    owner = next(r for r in of_type(records, "statement") if r["knowledge_id"] == the["owner"])
    assert owner["entity_ids"] == [the["robert"]]
    _, files = package(download(api, export(api, base, "anthill")))
    assert ids(files["records/entities.jsonl"], "entity_id") == kept
    assert ids(files["records/conflicts.jsonl"], "conflict_id") == {the["conflict"]}


# ---------------------------------------------------------------- padding, faults, the file on disk
@pytest.mark.parametrize("fmt", ["obsidian", "jsonl", "anthill"])
def test_padding_adds_a_stored_entry_of_that_size_and_the_knowledge_still_reads(
    api: httpx.Client, engine: Double, base: str, fmt: str
) -> None:
    plain = export(api, base, fmt)
    settings(engine, padding_bytes=3 * MIB + 5)
    padded = export(api, base, fmt)
    grown = padded["size_bytes"] - plain["size_bytes"]
    assert 3 * MIB + 5 <= grown < 3 * MIB + 64 * 1024  # stored: the padding's bytes and little framing
    data = download(api, padded)
    if fmt == "obsidian":
        info = zipfile.ZipFile(io.BytesIO(data)).getinfo("padding.bin")
        assert (info.compress_type, info.file_size) == (zipfile.ZIP_STORED, 3 * MIB + 5)
    elif fmt == "jsonl":
        records = jsonl_records(data)
        assert len(json.dumps(records[-1], separators=(",", ":"))) + 1 == 3 * MIB + 5
        assert records[-1]["record_type"] == "padding" and records[:-1] == jsonl_records(download(api, plain))
    else:
        manifest, files = package(data)
        assert len(files["padding.bin"]) == 3 * MIB + 5 and "padding.bin" not in {f["path"] for f in manifest["files"]}
    assert statement_ids(fmt, data) == served(engine, base)


def test_download_faults_apply_to_the_real_archive(api: httpx.Client, engine: Double, base: str) -> None:
    row = export(api, base, "jsonl")
    whole = download(api, row)
    fault = f"{engine.control_url}/exports/{row['export_id']}/download-faults"
    answers = {}
    for kind in ("corrupt", "truncate", "extend", "wrong_digest", "wrong_record"):
        httpx.post(fault, json={"kind": kind}, timeout=30.0).raise_for_status()
        answer = api.get(f"/api/exports/{row['export_id']}/download")
        answers[kind] = (answer.content, answer.headers["X-Export-Sha256"])
    corrupt, truncated, extended = answers["corrupt"][0], answers["truncate"][0], answers["extend"][0]
    assert len(corrupt) == len(whole) and corrupt != whole
    assert whole.startswith(truncated) and len(truncated) < len(whole)
    assert extended.startswith(whole) and len(extended) > len(whole)
    assert (
        answers["wrong_digest"] == (whole, answers["wrong_digest"][1]) and answers["wrong_digest"][1] != row["sha256"]
    )
    other, digest = answers["wrong_record"]
    assert hashlib.sha256(other).hexdigest() == digest != row["sha256"]
    assert jsonl_records(other)[0]["project_ref"] == "other"  # another archive, whole and consistent
    assert download(api, row) == whole  # the faults spent


def test_the_archive_is_a_file_on_the_engines_disk_and_expiring_removes_it(
    api: httpx.Client, engine: Double, base: str
) -> None:
    row = export(api, base, "obsidian")
    assert engine.data_dir is not None
    (archive,) = (engine.data_dir / "exports").glob(f"{row['export_id']}*")
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == row["sha256"]
    expired = httpx.post(f"{engine.control_url}/exports/{row['export_id']}/expire", timeout=30.0).json()
    assert expired["archive_expired_at"] and not expired["downloadable"] and not archive.exists()
    gone = api.get(f"/api/exports/{row['export_id']}/download")
    assert (gone.status_code, gone.json()["error"]["code"]) == (410, "archive_expired")


def test_the_settings_refuse_what_they_do_not_take(engine: Double) -> None:
    answer = httpx.put(f"{engine.control_url}/exports/settings", json={"archive_bytes": 180_000}, timeout=30.0)
    assert answer.status_code == 400 and "padding_bytes" in answer.json()["error"]["message"]


# ---------------------------------------------------------------- the writer's law
@given(
    contents=st.lists(st.binary(max_size=4096), max_size=6),
    padding=st.one_of(st.just(0), st.integers(min_value=1, max_value=300_000)),
)
def test_whatever_the_members_and_padding_each_format_reads_back_what_was_written(
    contents: list[bytes], padding: int
) -> None:
    """The writer's law, for any members and any padding: the digest and size are the file's, and
    zipfile, gzip and tarfile read back exactly the members (the gzip formats across their members)."""
    members = [Member(f"records/{n}.jsonl", data) for n, data in enumerate(contents)]
    with tempfile.TemporaryDirectory() as scratch:
        for fmt, suffix in archives.FORMATS.items():
            path = Path(scratch) / f"archive{suffix}"
            written = archives.write(fmt, members, path, padding)
            data = path.read_bytes()
            assert (written.sha256, written.size) == (hashlib.sha256(data).hexdigest(), len(data))
            if fmt == "obsidian":
                vault = zipfile.ZipFile(io.BytesIO(data))
                assert [vault.read(m.name) for m in members] == contents
                assert ("padding.bin" in vault.namelist()) == (padding > 0)
            elif fmt == "jsonl":
                text = gzip.decompress(data)
                assert text.startswith(b"".join(contents))
                tail = text[len(b"".join(contents)) :]
                least = len(jsonl.PADDING_HEAD) + len(jsonl.PADDING_TAIL)  # a padding line is at least its JSON
                assert (
                    (json.loads(tail)["record_type"], len(tail)) == ("padding", max(padding, least))
                    if padding
                    else not tail
                )
            else:
                with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                    read = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
                assert [read[m.name] for m in members] == contents
                assert len(read.get("padding.bin", b"")) == padding
