"""The ``obsidian`` format (``archives.py``): a vault of markdown notes linked by wikilinks,
written as a zip."""

from __future__ import annotations

import json
import re
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from local_engine.exports.members import _VALUE, Member
from local_engine.exports.records import Base
from local_engine.exports.streams import LEVEL, PADDING_NAME, DigestFile, fill

ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
LABEL_MAX = 120


# ---------------------------------------------------------------------------- render


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
