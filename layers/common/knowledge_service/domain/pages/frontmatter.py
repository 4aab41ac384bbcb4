"""The frontmatter reader, by the hub's own rules, and the patches review and promote make.

The block opens when the page's first line is exactly ``---`` (never ``--- # comment`` or
``---yaml``) and closes on the next line that is exactly ``---``. It holds plain
``key: value`` lines; a value is a plain or quoted scalar, a flow list (``[a, b]``), a
``|`` or ``>`` block scalar (read as one folded line), or, on the lines below an empty
value, ``- item`` entries (an entry may be a mapping: ``- by: human`` with ``at: ...``
indented under it, or a flow mapping ``- {by: human, at: ...}``). Comment and blank lines
are skipped. Any other top-level key is a custom key: its text (what follows the colon, and
the indented block under it, a nested map or list included) is kept byte for byte as its
value and never read, so no custom key makes a block unparsed (the specification's ruling,
"Custom frontmatter keys"); the keys the reader knows keep their grammar.

The reader never raises: a block it cannot read safely is ``unparsed``, and its ``problem``
names the line and the cause (a key set twice, a line that is not ``key: value``, a flow
list that does not close), never a cause it does not have. The patches (``append_entry``,
``set_fields``) change only the lines of the keys they touch.

Why a hand reader and not a YAML library (decided in issue 26, kept on purpose): the rules
need what a YAML parser does not give. A custom key's text is kept byte for byte and never
read; a YAML parser reads every key, and a custom block that is not YAML (a tab, ``a: b:``,
an alias) would make a valid page unparsed, which the ruling forbids. The patches rewrite
only the lines of the keys they touch, so each key's line span is needed, and a load gives
values, not spans. The known keys' grammar is narrower than YAML (``--- # x`` is no opener,
a duplicate key is refused, not last-wins) and every value is a string (YAML 1.1 would read
``status: on`` as a boolean and ``stale_after: 2026-01-01`` as a date), so a library would
be a strings-only loader with these rules re-implemented on top of it: more code, not
less, and one more dependency in every function that reads pages. The reader is held by
Hypothesis properties (render then read round-trips; custom keys kept as written) and a
real-world corpus (``tests/e2e/realworld_docs``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

KNOWN_KEYS = (
    "type",
    "title",
    "description",
    "status",
    "tags",
    "stale_after",
    "okf_version",
    "verified",
    "sources",
)
SCALAR_KEYS = ("type", "title", "description", "status", "stale_after", "okf_version")
ENTRY_KEYS = {"verified": ("by", "at"), "sources": ("title", "resource")}

_KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*?))?[ \t]*$")
_ITEM_LINE = re.compile(r"^([ \t]*)-(?:[ \t]+(.*?))?[ \t]*$")
_NESTED_KEY = re.compile(r"^([ \t]+)([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*?))?[ \t]*$")
_BLOCK_SCALAR = re.compile(r"^[|>][+-]?[0-9]?$")


class BlockState(StrEnum):
    NONE = "none"  # no block: the first line is not ``---``
    UNPARSED = "unparsed"  # the first line only looks like the opener, or the block cannot be read
    READ = "read"


Value = str | list[Any] | dict[str, str]


@dataclass
class Frontmatter:
    state: BlockState
    values: dict[str, Value] = field(default_factory=dict)  # known keys as read; custom keys' text as written
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)  # key -> [first line, end line)
    close_line: int = 0  # index of the closing ``---``
    problem: str = ""  # why an unparsed block cannot be read
    remedy: str = ""  # what makes it readable, in the words a refusal gives

    @property
    def known(self) -> dict[str, Value]:
        return {k: v for k, v in self.values.items() if k in KNOWN_KEYS}

    def text(self, key: str) -> str | None:
        value = self.values.get(key)
        return value if isinstance(value, str) else None

    def tags(self) -> list[str] | None:
        value = self.values.get("tags")
        if isinstance(value, str):
            return [value] if value else []
        if isinstance(value, list):
            return [v for v in value if isinstance(v, str)]
        return None

    def entries(self, key: str) -> list[dict[str, str]]:
        value = self.values.get(key)
        if not isinstance(value, list):
            return []
        return [v for v in value if isinstance(v, dict)]

    def control_character_key(self) -> str | None:
        """The first key whose value holds a control character (a write refuses it).

        A custom key's text spans its lines: the line breaks between them are the block's
        own, not part of a value."""
        for key, value in self.values.items():
            texts = _strings(value) if key in KNOWN_KEYS else str(value).split("\n")
            if any(_has_control(text) for text in texts):
                return key
        return None


def _strings(value: Value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return list(value.values())
    return [s for item in value for s in _strings(item)]


def _has_control(text: str) -> bool:
    return any(unicodedata.category(c) == "Cc" for c in text)


def split_lines(text: str) -> list[str]:
    """Lines with their endings, so a patch can put every other byte back as it was."""
    return text.splitlines(keepends=True) if text else []


def _bare(line: str) -> str:
    return line.rstrip("\r\n")


def read(text: str) -> Frontmatter:
    """The page's frontmatter by the hub's rules. Never raises."""
    lines = split_lines(text)
    if not lines:
        return Frontmatter(BlockState.NONE)
    first = _bare(lines[0])
    if first != "---":
        if first.startswith("---"):
            return Frontmatter(
                BlockState.UNPARSED,
                problem=f"the first line is '{first[:40]}', not exactly '---'",
                remedy="make its first line exactly '---'",
            )
        return Frontmatter(BlockState.NONE)
    close = next((i for i in range(1, len(lines)) if _bare(lines[i]) == "---"), None)
    if close is None:
        return Frontmatter(
            BlockState.UNPARSED,
            problem="the block opened with '---' never closes",
            remedy="close the block with a line that is exactly '---'",
        )
    try:
        values, spans = _read_block([_bare(line) for line in lines[1:close]], offset=1)
    except _Unreadable as error:
        return Frontmatter(BlockState.UNPARSED, problem=str(error), remedy="write that line as the hub reads it")
    return Frontmatter(BlockState.READ, values, spans, close)


class _Unreadable(ValueError):
    pass


def _read_block(lines: list[str], offset: int) -> tuple[dict[str, Value], dict[str, tuple[int, int]]]:
    values: dict[str, Value] = {}
    spans: dict[str, tuple[int, int]] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        match = _KEY_LINE.match(line)
        if not match:
            raise _Unreadable(f"line {i + offset + 1} is not a plain 'key: value' line")
        key, raw = match.group(1), (match.group(2) or "")
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and (not lines[i].strip() or lines[i][:1] in (" ", "\t", "-")):
            body.append(lines[i])
            i += 1
        while body and not body[-1].strip():  # trailing blank lines belong to no key
            body.pop()
            i -= 1
        if key in values:
            raise _Unreadable(f"the key '{key}' is set twice")
        values[key] = _value(raw, body, i + offset) if key in KNOWN_KEYS else "\n".join([raw, *body]).strip("\n")
        spans[key] = (start + offset, start + offset + 1 + len(body))
    return values, spans


def _value(raw: str, body: list[str], where: int) -> Value:
    raw = _strip_comment(raw)
    if _BLOCK_SCALAR.match(raw):
        return " ".join(line.strip() for line in body if line.strip())
    if raw:
        if any(line.strip() and not line.lstrip().startswith("#") for line in body):
            raise _Unreadable(f"the value before line {where} continues on lines the hub does not read")
        return _scalar_or_flow(raw)
    if not body:
        return ""
    return _items(body)


def _items(body: list[str]) -> list[Any]:
    items: list[Any] = []
    current: dict[str, str] | None = None
    for line in body:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM_LINE.match(line)
        if item:
            text = item.group(2) or ""
            nested = _KEY_LINE.match(text)
            if nested and not text.startswith(("'", '"', "{", "[")):
                # the comment is cut from the value, so a quoted value keeps its " #"
                current = {nested.group(1): _plain(_strip_comment(nested.group(2) or ""))}
                items.append(current)
            else:
                current = None
                items.append(_scalar_or_flow(_strip_comment(text)))
            continue
        nested_key = _NESTED_KEY.match(line)
        if nested_key and current is not None:
            current[nested_key.group(2)] = _plain(_strip_comment(nested_key.group(3) or ""))
            continue
        raise _Unreadable("a list holds a line that is neither '- item' nor a key of the item above")
    return items


def _strip_comment(raw: str) -> str:
    if raw.startswith(("'", '"')):
        return raw
    cut = raw.find(" #")
    return raw[:cut].rstrip() if cut >= 0 else raw


def _scalar_or_flow(raw: str) -> Value:
    if raw.startswith("["):
        if not raw.endswith("]"):
            raise _Unreadable("a flow list does not close on its line")
        return [_plain(part) for part in _split_flow(raw[1:-1])]
    if raw.startswith("{"):
        if not raw.endswith("}"):
            raise _Unreadable("a flow mapping does not close on its line")
        mapping: dict[str, str] = {}
        for part in _split_flow(raw[1:-1]):
            key, sep, value = part.partition(":")
            if not sep or not key.strip():
                raise _Unreadable("a flow mapping holds an entry that is not 'key: value'")
            mapping[key.strip()] = _plain(value)
        return mapping
    return _plain(raw)


def _split_flow(inner: str) -> list[str]:
    parts: list[str] = []
    buf: list[str] = []
    quote = ""
    i = 0
    while i < len(inner):
        char = inner[i]
        if quote:
            buf.append(char)
            if char == "\\" and quote == '"' and i + 1 < len(inner):
                buf.append(inner[i + 1])
                i += 1
            elif char == quote:
                quote = ""
        elif char in ("'", '"'):
            quote = char
            buf.append(char)
        elif char in "[]{}":
            raise _Unreadable("a flow collection nests another")
        elif char == ",":
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(char)
        i += 1
    if quote:
        raise _Unreadable("a quoted value does not close")
    parts.append("".join(buf))
    stripped = [p.strip() for p in parts]
    if stripped == [""]:
        return []
    if any(not p for p in stripped):
        raise _Unreadable("a flow collection holds an empty entry")
    return stripped


def _plain(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return _unescape(raw[1:-1])
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1].replace("''", "'")
    if raw[:1] in ("'", '"'):
        raise _Unreadable("a quoted value does not close")
    return raw


_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "0": "\0"}


def _unescape(inner: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(inner):
        char = inner[i]
        if char == "\\" and i + 1 < len(inner):
            out.append(_ESCAPES.get(inner[i + 1], inner[i + 1]))
            i += 2
            continue
        if char == '"':
            raise _Unreadable("a double-quoted value holds an unescaped quote")
        out.append(char)
        i += 1
    return "".join(out)


# ---------------------------------------------------------------------- writing values
def quote(text: str) -> str:
    """A double-quoted scalar the reader reads back as ``text``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def scalar_line(key: str, value: str | list[str]) -> str:
    if isinstance(value, list):
        return f"{key}: [{', '.join(quote(v) for v in value)}]"
    return f"{key}: {quote(value)}"


def entry_lines(entry: dict[str, str]) -> list[str]:
    keys = list(entry)
    lines = [f"  - {keys[0]}: {quote(entry[keys[0]])}"]
    lines += [f"    {key}: {quote(entry[key])}" for key in keys[1:]]
    return lines


def render(values: dict[str, str | list[str] | list[dict[str, str]]]) -> str:
    """A block the reader reads back as ``values`` (tests and the promote of a bare page)."""
    lines = ["---"]
    for key, value in values.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"{key}:")
            for entry in value:
                assert isinstance(entry, dict)
                lines += entry_lines(entry)
        else:
            lines.append(scalar_line(key, value))  # type: ignore[arg-type]
    lines.append("---")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- patches
class Unpatchable(ValueError):
    """The block cannot be patched safely: the caller answers ``invalid_argument``."""


def _newline(lines: list[str]) -> str:
    return "\r\n" if lines and lines[0].endswith("\r\n") else "\n"


def _require_patchable(text: str) -> tuple[Frontmatter, list[str]]:
    block = read(text)
    if block.state is BlockState.UNPARSED:
        raise Unpatchable(f"its frontmatter cannot be patched safely ({block.problem}); {block.remedy}")
    return block, split_lines(text)


def append_entry(text: str, key: str, entry: dict[str, str]) -> str:
    """``text`` with ``entry`` appended to the ``key`` list; every other byte as it was."""
    block, lines = _require_patchable(text)
    nl = _newline(lines)
    added = [line + nl for line in entry_lines(entry)]
    if block.state is BlockState.NONE:
        return "".join([f"---{nl}", f"{key}:{nl}", *added, f"---{nl}"]) + text
    span = block.spans.get(key)
    if span is None:
        return "".join([*lines[: block.close_line], f"{key}:{nl}", *added, *lines[block.close_line :]])
    value = block.values[key]
    if not isinstance(value, list) or _bare(lines[span[0]]).rstrip() != f"{key}:":
        if value == "":
            return "".join(lines[: span[1]] + added + lines[span[1] :])
        raise Unpatchable(f"its '{key}' is not a '- item' list the hub can append to")
    return "".join(lines[: span[1]] + added + lines[span[1] :])


def set_fields(text: str, fields: dict[str, str | list[str]]) -> str:
    """``text`` with each of ``fields`` set (replacing the key's lines, or added at the end)."""
    block, lines = _require_patchable(text)
    nl = _newline(lines)
    if block.state is BlockState.NONE:
        head = [f"---{nl}"] + [scalar_line(k, v) + nl for k, v in fields.items()] + [f"---{nl}"]
        return "".join(head) + text
    replacements: dict[int, tuple[int, str]] = {}
    appended: list[str] = []
    for key, value in fields.items():
        line = scalar_line(key, value) + nl
        if key in block.spans:
            start, end = block.spans[key]
            replacements[start] = (end, line)
        else:
            appended.append(line)
    out: list[str] = []
    i = 0
    while i < len(lines):
        if i in replacements:
            end, line = replacements[i]
            out.append(line)
            i = end
            continue
        if i == block.close_line:
            out += appended
        out.append(lines[i])
        i += 1
    return "".join(out)
