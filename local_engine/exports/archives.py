"""Export archives: a knowledge base read from the store and written as one of the three formats
the contract names (docs/upstream-contract.md, "Exports").

Three steps, each a function of its own (the benchmark times each, ``benchmarks/archives.py``):

1. **read** (:func:`read_base`): the base's rows as the options ask, fetched in one hold of the
   engine's lock (:func:`fetch`: a consistent cut, no stage commits between two of its queries),
   then made into plain records sorted by id outside it (:func:`assemble`). What is read:

   - sources: the base's ``completed`` sources (failed ones and byte-for-byte copies are not
     knowledge); their text only with ``include_sources``;
   - chunks: only with ``include_chunks``, those of the sources above;
   - statements: the indexed ones; ``Superseded`` and ``Archived`` (a rejected statement) only
     with ``include_superseded``; each with its entities, disagreements and evidence ids;
   - evidence: of the statements above, each excerpt read from the stored text at its offsets
     (``missing_excerpt`` when its hash no longer matches, as the reads answer it);
   - entities: the canonical ones (``merged_into`` null) with aliases, mentions and
     relationships; those merged into another only with ``include_superseded``;
   - conflicts: every disagreement of the base with its sides (each side's words, whether or
     not the side is exported) and its decision.

   ``include_general_learning`` and ``include_mission_fixtures`` are taken and recorded: this
   engine holds neither, so they add nothing.

2. **render** (:func:`render`): the archive's members as ``(name, bytes)``, sorted, with no
   clock in them, so the same knowledge (and options) gives the same bytes:

   - ``obsidian``: a vault of markdown notes, ``Statements/<id>.md``, ``Entities/<id>.md``,
     ``Sources/<id>.md``, ``Conflicts/<id>.md`` and ``Index.md``, linked with
     ``[[id|label]]`` wikilinks (a statement links its entities, sources and disagreements; an
     entity, a source and a disagreement link back), each with YAML frontmatter (its
     ``aliases`` carry the record's name, so a vault finds it by name);
   - ``jsonl``: one member, one JSON record a line (``record_type``: ``manifest`` first, then
     ``source``, ``chunk``, ``statement``, ``evidence``, ``entity``, ``conflict``);
   - ``anthill``: the ANTHILL package, version 7: ``anthill-package.json`` (the package version,
     the base, the **revision object** the package was cut from — ``id``,
     ``publication_sequence``, ``logical_content_hash``, ``publication_status``,
     ``producer_instance_id``, ``producer_generation``, ``published_at``, null for a base that
     published none —, the options, the counts and each record file's size and SHA-256), then
     ``records/<kind>.jsonl``.

3. **write** (:func:`write`): to a file on disk, each byte hashed (SHA-256) and counted as it is
   written, so the digest and size are known when the file is; a temporary name renamed at the end,
   so a half-written archive is never served. ``obsidian`` is a zip (deflate level 6, entries at
   1980-01-01 with mode 0644, data descriptors since the output is a stream); ``jsonl`` and
   ``anthill`` are gzip (level 6, ``mtime`` 0, no name) over the JSON lines or a tar (PAX, owner 0,
   ``mtime`` 0, mode 0644).

**Padding** (the control port's ``padding_bytes``, for a test that needs a large download without a
GiB of knowledge): one more entry of that many bytes of hex text, **stored** (not compressed) and
streamed to disk a block at a time: ``padding.bin`` in the zip (stored, zip64 past 2 GiB); for the
gzip formats, a gzip member of its own written with deflate's stored blocks (RFC 1952 lets members
follow one another; every reader reads them as one stream), holding a ``padding`` record line of that
length (``jsonl``) or ``padding.bin`` with its tar header (``anthill``; it is no part of the package
and its manifest does not name it).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sqlite3
import struct
import tarfile
import zipfile
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from local_engine.serving.state import ANTHILL_PACKAGE_VERSION, ENGINE_VERSION
from local_engine.store.database import Store

FORMATS = {"obsidian": ".zip", "jsonl": ".jsonl.gz", "anthill": ".anthill.tar.gz"}
FLAGS = (
    "include_sources",
    "include_chunks",
    "include_superseded",
    "include_general_learning",
    "include_mission_fixtures",
)
HISTORICAL = ("Superseded", "Archived")
RECORD_KINDS = ("source", "chunk", "statement", "evidence", "entity", "conflict")
STAT_NAMES = {
    "source": "sources",
    "chunk": "chunks",
    "statement": "statements",
    "evidence": "evidence",
    "entity": "entities",
    "conflict": "conflicts",
}
PACKAGE_MANIFEST = "anthill-package.json"
PADDING_NAME = "padding.bin"
LEVEL = 6
BLOCK = 1024 * 1024
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
LABEL_MAX = 120
FILL = hashlib.shake_256(b"forager export padding").hexdigest(BLOCK // 2).encode("ascii")
"""The padding's bytes: 1 MiB of hex text (valid inside a JSON string), repeated."""


def flags(options: dict[str, Any]) -> dict[str, bool]:
    """The options that change what an archive holds, each true or false."""
    return {name: bool(options.get(name, False)) for name in FLAGS}


# ---------------------------------------------------------------------------- read


@dataclass
class Base:
    """A knowledge base as an export holds it: records by kind, each sorted by its id."""

    ref: str
    name: str
    records: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {k: [] for k in RECORD_KINDS})
    names: dict[str, str] = field(default_factory=dict)
    """Every entity's name, exported or not (a relationship may name one merged away)."""

    def stats(self) -> dict[str, int]:
        return {STAT_NAMES[kind]: len(self.records[kind]) for kind in RECORD_KINDS}


def _json(text: str | None, default: Any) -> Any:
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return text


def _hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_base(store: Store, ref: str, name: str, options: dict[str, Any]) -> Base:
    """The base's records as ``options`` ask (see the module's docstring)."""
    return assemble(ref, name, fetch(store, ref, options), options)


def fetch(store: Store, ref: str, options: dict[str, Any]) -> dict[str, list[sqlite3.Row]]:
    """Every row an archive of ``ref`` needs, table by table, in one hold of the engine's lock (the
    caller may hold it longer, to read the revision the rows are of in the same cut)."""
    wanted = flags(options)
    historical = wanted["include_superseded"]
    with store.lock:
        sources = store.rows(
            "SELECT * FROM sources WHERE ref = ? AND status = 'completed' ORDER BY source_id",
            ref,
        )
        chunks = (
            store.rows(
                "SELECT c.* FROM chunks c JOIN sources s USING (source_id)"
                " WHERE c.ref = ? AND s.status = 'completed' ORDER BY c.chunk_id",
                ref,
            )
            if wanted["include_chunks"]
            else []
        )
        served = "k.ref = ? AND k.indexed = 1" + (
            "" if historical else " AND k.status NOT IN ('Superseded', 'Archived')"
        )
        statements = store.rows(f"SELECT k.* FROM statements k WHERE {served} ORDER BY k.knowledge_id", ref)  # noqa: S608
        evidence = store.rows(
            "SELECT e.*, substr(s.text, e.char_start + 1, e.char_end - e.char_start) AS excerpt"  # noqa: S608 - our clause
            " FROM evidence e JOIN statements k USING (knowledge_id) JOIN sources s ON s.source_id = e.source_id"
            f" WHERE {served} ORDER BY e.evidence_id",
            ref,
        )
        entities = store.rows("SELECT * FROM entities WHERE ref = ? ORDER BY entity_id", ref)
        aliases = store.rows(
            "SELECT a.* FROM aliases a JOIN entities e USING (entity_id) WHERE e.ref = ? ORDER BY a.entity_id, a.alias",
            ref,
        )
        mentions = store.rows(
            "SELECT entity_id, source_id, knowledge_id FROM mentions WHERE ref = ?"
            " ORDER BY entity_id, source_id, char_start",
            ref,
        )
        relationships = store.rows(
            "SELECT r.* FROM relationships r JOIN entities e ON e.entity_id = r.from_entity"
            " WHERE e.ref = ? ORDER BY r.from_entity, r.type, r.to_entity, r.knowledge_id",
            ref,
        )
        conflicts = store.rows("SELECT * FROM conflicts WHERE ref = ? ORDER BY conflict_id", ref)
        sides = store.rows(
            "SELECT cs.conflict_id, cs.knowledge_id, cs.position, k.title, k.statement, k.status"
            " FROM conflict_sides cs JOIN conflicts c USING (conflict_id)"
            " LEFT JOIN statements k ON k.knowledge_id = cs.knowledge_id"
            " WHERE c.ref = ? ORDER BY cs.conflict_id, cs.position, cs.knowledge_id",
            ref,
        )
    return {
        "sources": sources,
        "chunks": chunks,
        "statements": statements,
        "evidence": evidence,
        "entities": entities,
        "aliases": aliases,
        "mentions": mentions,
        "relationships": relationships,
        "conflicts": conflicts,
        "sides": sides,
    }


def assemble(ref: str, name: str, rows: dict[str, list[sqlite3.Row]], options: dict[str, Any]) -> Base:
    """The records of what :func:`fetch` read (no lock held: the rows are the cut)."""
    wanted = flags(options)
    historical = wanted["include_superseded"]
    base = Base(ref=ref, name=name)
    sources, chunks, statements, evidence = rows["sources"], rows["chunks"], rows["statements"], rows["evidence"]
    entities, aliases, mentions, relationships = (
        rows["entities"],
        rows["aliases"],
        rows["mentions"],
        rows["relationships"],
    )
    conflicts, sides = rows["conflicts"], rows["sides"]
    kept = {str(r["knowledge_id"]) for r in statements}
    _sources(base, sources, wanted["include_sources"])
    base.records["chunk"] = [_chunk(r) for r in chunks]
    by_item: dict[str, list[str]] = defaultdict(list)
    base.records["evidence"] = [_evidence(r) for r in evidence]
    for link in base.records["evidence"]:
        by_item[link["knowledge_id"]].append(link["evidence_id"])
    items_of, sources_of, mention_count, entities_of = _mentions(mentions, kept)
    conflict_sides: dict[str, list[dict[str, Any]]] = defaultdict(list)
    conflicts_of: dict[str, list[str]] = defaultdict(list)
    for side in sides:
        conflict_sides[side["conflict_id"]].append(
            {
                "knowledge_id": side["knowledge_id"],
                "position": side["position"],
                "title": side["title"],
                "statement": side["statement"],
                "status": side["status"],
                "exported": side["knowledge_id"] in kept,
            }
        )
        conflicts_of[side["knowledge_id"]].append(side["conflict_id"])
    base.records["statement"] = [
        _statement(r, sorted(entities_of[r["knowledge_id"]]), sorted(set(conflicts_of[r["knowledge_id"]])),
                   by_item[r["knowledge_id"]])
        for r in statements
    ]  # fmt: skip
    base.names = {str(r["entity_id"]): str(r["name"]) for r in entities}
    alias_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in aliases:
        alias_rows[row["entity_id"]].append(
            {"alias": row["alias"], "kind": row["kind"], "confidence": row["confidence"]}
        )
    outgoing: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in relationships:
        if row["knowledge_id"] in kept:
            outgoing[row["from_entity"]].append(
                {"type": row["type"], "to_entity": row["to_entity"], "knowledge_id": row["knowledge_id"],
                 "source_id": row["source_id"], "confidence": row["confidence"]}
            )  # fmt: skip
    base.records["entity"] = [
        {
            "record_type": "entity",
            "entity_id": r["entity_id"],
            "name": r["name"],
            "normalized_name": r["normalized"],
            "type": r["type"],
            "confidence": r["confidence"],
            "attributes": _json(r["attributes"], {}),
            "aliases": alias_rows[r["entity_id"]],
            "merged_into": r["merged_into"],
            "mention_count": mention_count[r["entity_id"]],
            "knowledge_ids": sorted(items_of[r["entity_id"]]),
            "source_ids": sorted(sources_of[r["entity_id"]]),
            "relationships": outgoing[r["entity_id"]],
            "created_at": r["created_at"],
        }
        for r in entities
        if r["merged_into"] is None or historical
    ]
    base.records["conflict"] = [
        {
            "record_type": "conflict",
            "conflict_id": r["conflict_id"],
            "title": r["title"],
            "type": r["type"],
            "status": r["status"],
            "suggested_resolution": r["suggested_resolution"],
            "suggested_winner": r["suggested_winner"],
            "decision": _json(r["decision"], None),
            "detected_at": r["detected_at"],
            "sides": conflict_sides[r["conflict_id"]],
        }
        for r in conflicts
    ]
    return base


def _sources(base: Base, rows: list[sqlite3.Row], with_text: bool) -> None:
    for r in rows:
        text = r["text"] or ""
        record = {
            "record_type": "source",
            "source_id": r["source_id"],
            "name": r["name"],
            "relative_path": r["relative_path"],
            "type": r["type"] or "unknown",
            "mime_type": r["mime_type"] or "application/octet-stream",
            "parser": r["parser"],
            "size_bytes": r["size_bytes"],
            "content_hash": r["content_hash"],
            "logical_content_hash": r["logical_content_hash"],
            "document_date": r["document_date"],
            "superseded_by": r["superseded_by"],
            "char_count": len(text),
            "created_at": r["created_at"],
        }
        if with_text:
            record["text"] = text
        base.records["source"].append(record)


def _chunk(r: sqlite3.Row) -> dict[str, Any]:
    return {
        "record_type": "chunk",
        "chunk_id": r["chunk_id"],
        "source_id": r["source_id"],
        "index": r["idx"],
        "heading": r["heading"],
        "line": r["line"],
        "char_start": r["char_start"],
        "char_end": r["char_end"],
        "text": r["text"],
        "token_estimate": max(1, len(r["text"]) // 4),
        "content_hash": _hash(r["text"]),
    }


def _evidence(r: sqlite3.Row) -> dict[str, Any]:
    excerpt = r["excerpt"] or ""
    found = bool(excerpt) and _hash(excerpt) == r["excerpt_hash"]
    return {
        "record_type": "evidence",
        "evidence_id": r["evidence_id"],
        "knowledge_id": r["knowledge_id"],
        "source_id": r["source_id"],
        "chunk_id": r["chunk_id"],
        "char_start": r["char_start"],
        "char_end": r["char_end"],
        "line": r["line"],
        "location": r["location"],
        "excerpt": excerpt if found else None,
        "excerpt_hash": r["excerpt_hash"],
        "extractor": r["extractor"],
        "missing_excerpt": not found,
    }


def _mentions(
    rows: list[sqlite3.Row], kept: set[str]
) -> tuple[dict[str, set[str]], dict[str, set[str]], dict[str, int], dict[str, set[str]]]:
    """(entity → its exported statements, entity → its sources, entity → mentions, statement → entities)."""
    items_of: dict[str, set[str]] = defaultdict(set)
    sources_of: dict[str, set[str]] = defaultdict(set)
    count: dict[str, int] = defaultdict(int)
    entities_of: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        entity = str(row["entity_id"])
        count[entity] += 1
        sources_of[entity].add(str(row["source_id"]))
        item = row["knowledge_id"]
        if item is not None and item in kept:
            items_of[entity].add(str(item))
            entities_of[str(item)].add(entity)
    return items_of, sources_of, count, entities_of


def _statement(r: sqlite3.Row, entities: list[str], conflicts: list[str], evidence: list[str]) -> dict[str, Any]:
    return {
        "record_type": "statement",
        "knowledge_id": r["knowledge_id"],
        "title": r["title"],
        "statement": r["statement"],
        "type": r["type"],
        "subject": r["subject"],
        "support": r["support"],
        "status": r["status"],
        "confidence": r["confidence"],
        "effective_date": r["effective_date"],
        "review_status": r["review_status"],
        "review_notes": r["review_notes"],
        "reviewed_by": r["reviewed_by"],
        "reviewed_at": r["reviewed_at"],
        "source_id": r["source_id"],
        "chunk_id": r["chunk_id"],
        "char_start": r["char_start"],
        "char_end": r["char_end"],
        "created_at": r["created_at"],
        "entity_ids": entities,
        "conflict_ids": conflicts,
        "evidence_ids": evidence,
    }


# ---------------------------------------------------------------------------- render


@dataclass(frozen=True)
class Member:
    """One entry of an archive: its name inside it and its bytes."""

    name: str
    data: bytes


_LINE = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode
_VALUE = json.JSONEncoder(ensure_ascii=False).encode
"""Encoders made once (``json.dumps`` with arguments makes one a call)."""


def line(record: dict[str, Any]) -> bytes:
    """A record as one JSON line: keys sorted, no spaces, UTF-8."""
    return (_LINE(record) + "\n").encode("utf-8")


def render(fmt: str, base: Base, options: dict[str, Any], revision: dict[str, Any] | None = None) -> list[Member]:
    """The archive's members (see the module's docstring), sorted as they are written."""
    if fmt == "jsonl":
        return [Member(f"{base.ref}.jsonl", b"".join(_jsonl(base, options)))]
    if fmt == "anthill":
        return _package(base, options, revision)
    if fmt == "obsidian":
        return sorted(_vault(base, options), key=lambda m: m.name)
    raise ValueError(f"no export format {fmt!r}")


def _jsonl(base: Base, options: dict[str, Any]) -> Iterator[bytes]:
    yield line(
        {"record_type": "manifest", "format": "jsonl", "project_ref": base.ref, "name": base.name,
         "options": flags(options), "stats": base.stats()}
    )  # fmt: skip
    for kind in RECORD_KINDS:
        for record in base.records[kind]:
            yield line(record)


def _package(base: Base, options: dict[str, Any], revision: dict[str, Any] | None) -> list[Member]:
    wanted = flags(options)
    files = [
        Member(f"records/{STAT_NAMES[kind]}.jsonl", b"".join(line(r) for r in base.records[kind]))
        for kind in RECORD_KINDS
        if kind != "chunk" or wanted["include_chunks"]
    ]
    manifest = {
        "package_version": ANTHILL_PACKAGE_VERSION,
        "producer": {"engine": "forager-local-engine", "version": ENGINE_VERSION},
        "project": {"ref": base.ref, "name": base.name},
        "revision": revision,
        "options": wanted,
        "stats": base.stats(),
        "files": [
            {
                "path": f.name,
                "records": f.data.count(b"\n"),
                "bytes": len(f.data),
                "sha256": hashlib.sha256(f.data).hexdigest(),
            }
            for f in files
        ],
    }
    head = (json.dumps(manifest, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode("utf-8")
    return [Member(PACKAGE_MANIFEST, head), *files]


# -- the obsidian vault ---------------------------------------------------------------


def _label(text: str | None) -> str:
    """Text a wikilink can show: one line, no ``|``, ``[`` or ``]``, at most LABEL_MAX characters."""
    flat = " ".join(str(text or "").split()).replace("|", "/").replace("[", "(").replace("]", ")")
    return flat if len(flat) <= LABEL_MAX else flat[: LABEL_MAX - 1].rstrip() + "…"


def _link(target: str, text: str | None) -> str:
    return f"[[{target}|{_label(text) or target}]]"


def _frontmatter(fields: dict[str, Any]) -> str:
    """YAML frontmatter: every value written as JSON (a JSON scalar or list is YAML too)."""
    body = "".join(f"{key}: {_VALUE(value)}\n" for key, value in fields.items())
    return f"---\n{body}---\n"


BACKTICKS = re.compile(r"`+")


def _fenced(text: str) -> str:
    """``text`` in a code fence longer than any run of backticks in it (so none of its lines closes it)."""
    longest = max((len(run) for run in BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}\n"


def _note(folder: str, record_id: str, text: str) -> Member:
    return Member(f"{folder}/{record_id}.md", text.encode("utf-8"))


def _vault(base: Base, options: dict[str, Any]) -> Iterator[Member]:
    statements = {r["knowledge_id"]: r for r in base.records["statement"]}
    sources = {r["source_id"]: r for r in base.records["source"]}
    conflicts = {r["conflict_id"]: r for r in base.records["conflict"]}
    evidence_of: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in base.records["evidence"]:
        evidence_of[row["knowledge_id"]].append(row)
    chunks_of: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in base.records["chunk"]:
        chunks_of[row["source_id"]].append(row)
    items_of_source: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in base.records["statement"]:
        items_of_source[row["source_id"]].append(row)
        for link in evidence_of[row["knowledge_id"]]:
            if link["source_id"] != row["source_id"]:
                items_of_source[link["source_id"]].append(row)

    def source_name(source_id: str) -> str:
        found = sources.get(source_id)
        return str(found["name"]) if found else source_id

    for item in base.records["statement"]:
        yield _note(
            "Statements", item["knowledge_id"], _statement_note(item, evidence_of, source_name, base, conflicts)
        )
    for entity in base.records["entity"]:
        yield _note("Entities", entity["entity_id"], _entity_note(entity, statements, source_name, base))
    for source in base.records["source"]:
        in_order = sorted(items_of_source[source["source_id"]], key=lambda r: (r["char_start"], r["knowledge_id"]))
        yield _note("Sources", source["source_id"], _source_note(source, in_order, chunks_of[source["source_id"]]))
    for conflict in base.records["conflict"]:
        yield _note("Conflicts", conflict["conflict_id"], _conflict_note(conflict))
    yield Member("Index.md", _index_note(base, options).encode("utf-8"))


def _statement_note(
    item: dict[str, Any],
    evidence_of: dict[str, list[dict[str, Any]]],
    source_name: Any,
    base: Base,
    conflicts: dict[str, dict[str, Any]],
) -> str:
    fields = {
        "knowledge_id": item["knowledge_id"],
        "type": item["type"],
        "status": item["status"],
        "support": item["support"],
        "confidence": item["confidence"],
        "review_status": item["review_status"],
        "effective_date": item["effective_date"],
        "subject": item["subject"],
        "source": item["source_id"],
        "aliases": [_label(item["title"])],
        "tags": ["statement"],
    }
    parts = [_frontmatter(fields), f"# {_label(item['title'])}\n\n{item['statement']}\n"]
    links = evidence_of[item["knowledge_id"]]
    parts.append("\n## Sources\n\n" + "".join(
        f"- {_link(e['source_id'], source_name(e['source_id']))}, {e['location']}\n"
        + (f"  > {' '.join(e['excerpt'].split())}\n" if e["excerpt"] else "  (the excerpt is no longer in the text)\n")
        for e in links
    ) if links else f"\n## Sources\n\n- {_link(item['source_id'], source_name(item['source_id']))}\n")  # fmt: skip
    if item["entity_ids"]:
        parts.append("\n## Entities\n\n" + "".join(f"- {_link(e, base.names.get(e, e))}\n" for e in item["entity_ids"]))
    if item["conflict_ids"]:
        parts.append(
            "\n## Disagreements\n\n"
            + "".join(f"- {_link(c, conflicts[c]['title'] if c in conflicts else c)}\n" for c in item["conflict_ids"])
        )
    return "".join(parts)


def _entity_note(entity: dict[str, Any], statements: dict[str, dict[str, Any]], source_name: Any, base: Base) -> str:
    names = [entity["name"], *(a["alias"] for a in entity["aliases"] if a["alias"] != entity["name"])]
    fields = {
        "entity_id": entity["entity_id"],
        "type": entity["type"],
        "confidence": entity["confidence"],
        "mention_count": entity["mention_count"],
        "merged_into": entity["merged_into"],
        "aliases": [_label(n) for n in names],
        "tags": ["entity", entity["type"]],
    }
    parts = [_frontmatter(fields), f"# {_label(entity['name'])}\n"]
    if entity["merged_into"]:
        into = entity["merged_into"]
        parts.append(f"\nMerged into {_link(into, base.names.get(into, into))}.\n")
    if len(names) > 1:
        parts.append("\nAlso named: " + ", ".join(_label(n) for n in names[1:]) + ".\n")
    if entity["knowledge_ids"]:
        parts.append(
            "\n## Statements\n\n"
            + "".join(f"- {_link(k, statements[k]['title'])}\n" for k in entity["knowledge_ids"] if k in statements)
        )
    if entity["source_ids"]:
        parts.append("\n## Sources\n\n" + "".join(f"- {_link(s, source_name(s))}\n" for s in entity["source_ids"]))
    if entity["relationships"]:
        parts.append(
            "\n## Relationships\n\n"
            + "".join(
                f"- {r['type']} {_link(r['to_entity'], base.names.get(r['to_entity'], r['to_entity']))}"
                f" ({_link(r['knowledge_id'], statements[r['knowledge_id']]['title'])})\n"
                for r in entity["relationships"]
                if r["knowledge_id"] in statements
            )
        )
    return "".join(parts)


def _source_note(source: dict[str, Any], items: list[dict[str, Any]], chunks: list[dict[str, Any]]) -> str:
    fields = {
        "source_id": source["source_id"],
        "relative_path": source["relative_path"],
        "type": source["type"],
        "mime_type": source["mime_type"],
        "size_bytes": source["size_bytes"],
        "content_hash": source["content_hash"],
        "document_date": source["document_date"],
        "aliases": [_label(source["name"])],
        "tags": ["source"],
    }
    parts = [_frontmatter(fields), f"# {_label(source['name'])}\n"]
    listed = list({r["knowledge_id"]: r for r in items}.values())  # each once, where it first is
    if listed:
        parts.append("\n## Statements\n\n" + "".join(f"- {_link(r['knowledge_id'], r['title'])}\n" for r in listed))
    if "text" in source:
        parts.append("\n## Text\n\n" + _fenced(source["text"]))
    if chunks:
        parts.append("\n## Chunks\n")
        for chunk in sorted(chunks, key=lambda c: c["index"]):
            heading = _label(chunk["heading"]) or "(no heading)"
            parts.append(f"\n### {chunk['index'] + 1}. {heading} (line {chunk['line']})\n\n" + _fenced(chunk["text"]))
    return "".join(parts)


def _conflict_note(conflict: dict[str, Any]) -> str:
    fields = {
        "conflict_id": conflict["conflict_id"],
        "type": conflict["type"],
        "status": conflict["status"],
        "suggested_resolution": conflict["suggested_resolution"],
        "suggested_winner": conflict["suggested_winner"],
        "detected_at": conflict["detected_at"],
        "aliases": [_label(conflict["title"])],
        "tags": ["disagreement"],
    }
    parts = [_frontmatter(fields), f"# {_label(conflict['title'])}\n\n## Sides\n\n"]
    for side in conflict["sides"]:
        words = " ".join(str(side["statement"] or "").split())
        shown = _link(side["knowledge_id"], side["title"]) if side["exported"] else f"`{side['knowledge_id']}`"
        parts.append(f"{side['position'] + 1}. {shown} ({side['status']}): {words}\n")
    if conflict["decision"] is not None:
        decision = conflict["decision"]
        text = json.dumps(decision, ensure_ascii=False, sort_keys=True) if not isinstance(decision, str) else decision
        parts.append(f"\n## Decision\n\n{_fenced(text)}")
    return "".join(parts)


def _index_note(base: Base, options: dict[str, Any]) -> str:
    title = _label(str(options.get("vault_name") or base.name))
    stats = base.stats()
    counted = ", ".join(f"{count} {name}" for name, count in stats.items())
    parts = [f"# {title}\n\nThe knowledge base {_label(base.name)} (`{base.ref}`): {counted}.\n"]
    for heading, kind, key, label in (
        ("Sources", "source", "source_id", "name"),
        ("Entities", "entity", "entity_id", "name"),
        ("Disagreements", "conflict", "conflict_id", "title"),
    ):
        rows = sorted(base.records[kind], key=lambda r: (str(r[label]).casefold(), r[key]))
        if rows:
            parts.append(f"\n## {heading}\n\n" + "".join(f"- {_link(r[key], r[label])}\n" for r in rows))
    return "".join(parts)


# ---------------------------------------------------------------------------- write


@dataclass(frozen=True)
class Written:
    sha256: str
    size: int


class DigestFile:
    """A file written forward only, each byte hashed and counted as it goes (no seek: a zip
    written here uses data descriptors, so nothing already hashed is written again)."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.digest = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes | bytearray | memoryview) -> int:
        self.handle.write(data)
        self.digest.update(data)
        count = memoryview(data).nbytes
        self.size += count
        return count

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        self.handle.flush()

    def close(self) -> None:
        """Nothing: the file is its owner's to close (a zip closing calls this)."""


class GzipMembers:
    """gzip (RFC 1952) written as members one after another, each at its own deflate level: the
    records compressed, the padding in stored blocks. A tar written into it sees one stream
    (``tell`` counts what it was given)."""

    HEADER = b"\x1f\x8b\x08\x00" + b"\x00\x00\x00\x00" + b"\x00\xff"  # deflate, no name, mtime 0, OS unknown

    def __init__(self, out: DigestFile, level: int = LEVEL) -> None:
        self.out = out
        self.level = level
        self.position = 0
        self._deflate: Any = None
        self._crc = 0
        self._length = 0
        self._members = 0

    def write(self, data: bytes | bytearray | memoryview) -> int:
        count = memoryview(data).nbytes
        if not count:
            return 0
        if self._deflate is None:
            self.out.write(self.HEADER)
            self._deflate = zlib.compressobj(self.level, zlib.DEFLATED, -zlib.MAX_WBITS)
            self._crc, self._length = 0, 0
        self._crc = zlib.crc32(data, self._crc)
        self._length += count
        self.position += count
        compressed = self._deflate.compress(data)
        if compressed:
            self.out.write(compressed)
        return count

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        """Nothing: a member ends only at :meth:`member` or :meth:`close` (tarfile flushes often)."""

    def member(self, level: int) -> None:
        """End the member being written; what comes next is a new one at ``level``."""
        self._end()
        self.level = level

    def _end(self) -> None:
        if self._deflate is None:
            return
        self.out.write(self._deflate.flush())
        self.out.write(struct.pack("<II", self._crc & 0xFFFFFFFF, self._length & 0xFFFFFFFF))
        self._deflate = None
        self._members += 1

    def close(self) -> None:
        if self._deflate is None and not self._members:  # nothing written: one empty member, a valid gzip file
            self.out.write(self.HEADER)
            self._deflate = zlib.compressobj(self.level, zlib.DEFLATED, -zlib.MAX_WBITS)
            self._crc, self._length = 0, 0
        self._end()


def fill(size: int) -> Iterator[bytes]:
    """``size`` bytes of the padding's hex text, a block at a time."""
    left = size
    while left > 0:
        piece = FILL if left >= len(FILL) else FILL[:left]
        left -= len(piece)
        yield piece


class _FillReader(io.RawIOBase):
    """The padding as a file to read (tarfile copies a member's bytes from one)."""

    def __init__(self, size: int) -> None:
        self.left = size
        self.offset = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        count = self.left if size is None or size < 0 else min(size, self.left)
        count = min(count, len(FILL) - self.offset)
        piece = FILL[self.offset : self.offset + count]
        self.offset = (self.offset + count) % len(FILL)
        self.left -= count
        return piece


def write(fmt: str, members: Iterable[Member], path: Path, padding_bytes: int = 0) -> Written:
    """The archive to ``path`` (through a temporary name beside it), hashed as it is written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.part")
    writer = WRITERS.get(fmt)
    if writer is None:
        raise ValueError(f"no export format {fmt!r}")
    try:
        with temporary.open("wb") as handle:
            out = DigestFile(handle)
            writer(out, members, padding_bytes)
            out.flush()
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return Written(sha256=out.digest.hexdigest(), size=out.size)


def _zip_info(name: str, compress_type: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=ZIP_EPOCH)
    info.compress_type = compress_type
    info.external_attr = 0o100644 << 16
    info.create_system = 3  # unix, whatever system builds it
    return info


def _write_zip(out: DigestFile, members: Iterable[Member], padding_bytes: int) -> None:
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=LEVEL) as vault:
        for member in members:
            vault.writestr(_zip_info(member.name, zipfile.ZIP_DEFLATED), member.data, compresslevel=LEVEL)
        if padding_bytes > 0:
            info = _zip_info(PADDING_NAME, zipfile.ZIP_STORED)
            info.file_size = padding_bytes
            with vault.open(info, "w", force_zip64=padding_bytes >= zipfile.ZIP64_LIMIT) as entry:
                for piece in fill(padding_bytes):
                    entry.write(piece)


PADDING_HEAD = b'{"fill":"'
PADDING_TAIL = b'","record_type":"padding"}\n'


def _write_jsonl(out: DigestFile, members: Iterable[Member], padding_bytes: int) -> None:
    stream = GzipMembers(out)
    for member in members:
        for start in range(0, len(member.data), BLOCK):
            stream.write(member.data[start : start + BLOCK])
    if padding_bytes > 0:
        stream.member(0)
        stream.write(PADDING_HEAD)
        for piece in fill(max(0, padding_bytes - len(PADDING_HEAD) - len(PADDING_TAIL))):
            stream.write(piece)
        stream.write(PADDING_TAIL)
    stream.close()


def _tar_info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = 0
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _write_tar(out: DigestFile, members: Iterable[Member], padding_bytes: int) -> None:
    stream = GzipMembers(out)
    with tarfile.open(fileobj=stream, mode="w", format=tarfile.PAX_FORMAT, copybufsize=BLOCK) as package:  # type: ignore[call-overload]
        for member in members:
            package.addfile(_tar_info(member.name, len(member.data)), io.BytesIO(member.data))
        if padding_bytes > 0:
            stream.member(0)
            package.addfile(_tar_info(PADDING_NAME, padding_bytes), _FillReader(padding_bytes))
            stream.member(LEVEL)
    stream.close()


WRITERS: dict[str, Callable[[DigestFile, Iterable[Member], int], None]] = {
    "obsidian": _write_zip,
    "jsonl": _write_jsonl,
    "anthill": _write_tar,
}


def build(
    fmt: str,
    base: Base,
    options: dict[str, Any],
    revision: dict[str, Any] | None,
    path: Path,
    padding_bytes: int = 0,
) -> Written:
    """Render and write: the archive of ``base`` at ``path``, its SHA-256 and size."""
    return write(fmt, render(fmt, base, options, revision), path, padding_bytes)
