"""Reading an inline ``multipart/form-data`` upload (RFC 7578), bounded before it is read.

The framing (delimiters, parts, header lines, where a part's bytes end) is
``python-multipart``'s streaming parser. What the form may hold is this module's: fields are
the upload's own (``project``, ``force``, ``admission_job_id``), at most 256 bytes of UTF-8
each and given once, and file parts are named ``files``; anything else is refused by name. A
file part's filename is a relative name, held to the workspace path fence's rules
(``workspace_paths.file_name``), as the upload session's names are. The body is at most what
Lambda takes (6 MB): the route refuses it by length before a byte is parsed.

A ``Content-Disposition``'s parameters are read here, not by the library's
``parse_options_header``: that one rewrites a filename that looks like a Windows path to its
last segment (``C:\\Windows\\win.ini`` would reach the fence as ``win.ini``), and the fence
must see the name exactly as it was sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from python_multipart import MultipartParser
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartState

from knowledge_service.domain.workspace_paths import PathRefused, file_name, shown
from knowledge_service.errors import BadRequest

FILENAME_MAX = 1024
FIELD_MAX = 256
_BOUNDARY = re.compile(r"^[0-9A-Za-z'()+_,\-./:=? ]{1,70}$")  # RFC 2046's bchars
_PARAM = re.compile(r';\s*([A-Za-z*]+)="((?:[^"\\]|\\.)*)"|;\s*([A-Za-z*]+)=([^;\s]+)')
_NOT_FRAMED = "is not a multipart body with the boundary its Content-Type names."


@dataclass(frozen=True)
class InlineFile:
    filename: str
    data: bytes


@dataclass(frozen=True)
class Form:
    fields: dict[str, str]
    files: list[InlineFile]


@dataclass
class _Part:
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    data: list[bytes] = field(default_factory=list)


class _Parts:
    """The parts ``python-multipart`` finds, each with its raw header lines and bytes."""

    def __init__(self) -> None:
        self.parts: list[_Part] = []
        self._name = b""
        self._value = b""

    def parser(self, boundary: str) -> MultipartParser:
        return MultipartParser(
            boundary.encode("ascii"),
            {
                "on_part_begin": lambda: self.parts.append(_Part()),
                "on_part_data": lambda data, start, end: self.parts[-1].data.append(data[start:end]),
                "on_header_field": self._on_name,
                "on_header_value": self._on_value,
                "on_header_end": self._on_header_end,
            },
        )

    def _on_name(self, data: bytes, start: int, end: int) -> None:
        self._name += data[start:end]

    def _on_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def _on_header_end(self) -> None:
        self.parts[-1].headers.append((self._name, self._value))
        self._name = self._value = b""


def boundary_of(content_type: str) -> str:
    kind, _, rest = content_type.partition(";")
    if kind.strip().lower() != "multipart/form-data":
        raise BadRequest("Content-Type", "must be multipart/form-data (or application/json naming a session_id).")
    boundary = _params(";" + rest).get("boundary", "")
    if not _BOUNDARY.match(boundary) or boundary.endswith(" "):
        raise BadRequest("Content-Type", "names no valid multipart boundary.")
    return boundary


def parse_form(body: bytes, content_type: str, allowed_fields: frozenset[str]) -> Form:
    """The form's fields and files, or a 400 naming what is wrong."""
    boundary = boundary_of(content_type)
    framed = body.lstrip()  # a preamble of white space only, as before the first delimiter
    if not framed.startswith(b"--" + boundary.encode("ascii")):
        raise BadRequest("body", _NOT_FRAMED)
    found = _Parts()
    parser = found.parser(boundary)
    try:
        parser.write(framed)
    except MultipartParseError as error:
        raise BadRequest("body", f"{_NOT_FRAMED[:-1]} ({error}).") from None
    if parser.state != MultipartState.END:
        raise BadRequest("body", "ends before its closing multipart delimiter.")
    fields: dict[str, str] = {}
    files: list[InlineFile] = []
    for part in found.parts:
        name, filename = _disposition(part.headers)
        content = b"".join(part.data)
        if filename is not None:
            if name != "files":
                raise BadRequest(name, "is not a file field of this request (file parts are named files).")
            files.append(InlineFile(_filename(filename), content))
        else:
            _add_field(fields, name, content, allowed_fields)
    return Form(fields, files)


def _add_field(fields: dict[str, str], name: str, content: bytes, allowed: frozenset[str]) -> None:
    if name not in allowed:
        raise BadRequest(name if re.fullmatch(r"[a-z_]{1,64}", name) else "body", "is not a field of this request.")
    if name in fields:
        raise BadRequest(name, "is given twice.")
    if len(content) > FIELD_MAX:
        raise BadRequest(name, f"is longer than {FIELD_MAX} bytes.")
    try:
        fields[name] = content.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest(name, "is not UTF-8 text.") from None


def _disposition(headers: list[tuple[bytes, bytes]]) -> tuple[str, str | None]:
    """The part's form field name and, for a file part, its filename (``""`` when empty).

    One reading only: a part with two ``Content-Disposition`` headers, a parameter given twice
    (two ``filename=``), or a quoted value left open (a CR/LF inside a quoted filename ends the
    header line there, and what followed would read as a header of its own) is refused, never
    read the way one parser or another would guess."""
    found: tuple[str, str | None] | None = None
    for raw_name, raw_value in headers:
        try:
            header, value = raw_name.decode("utf-8"), raw_value.decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest("body", "has a part whose headers are not UTF-8.") from None
        if header.strip().lower() != "content-disposition":
            continue
        if found is not None:
            raise BadRequest("body", "has a part with two Content-Disposition headers.")
        kind, _, rest = value.partition(";")
        if kind.strip().lower() != "form-data":
            break
        params = _params(";" + rest, strict=True)
        if "name" not in params:
            break
        found = params["name"], params.get("filename")
    if found is None:
        raise BadRequest("body", "has a part without a form-data Content-Disposition naming it.")
    return found


def _params(text: str, *, strict: bool = False) -> dict[str, str]:
    """The ``; name=value`` parameters of a header value; ``strict``: each named once, every
    quote closed (a 400 otherwise)."""
    if strict and len(re.findall(r'(?<!\\)"', text)) % 2:
        raise BadRequest(
            "files", "a part's Content-Disposition has a quoted value left open (a line break in a filename?)."
        )
    out: dict[str, str] = {}
    for quoted_name, quoted, bare_name, bare in _PARAM.findall(text):
        name = (quoted_name or bare_name).lower()
        if strict and name in out:
            raise BadRequest("files", f"a part's Content-Disposition gives {name} twice.")
        out[name] = quoted.replace('\\"', '"') if quoted_name else bare
    return out


def _filename(name: str) -> str:
    """A file part's filename, held to the one file-name rule (``workspace_paths.file_name``):
    its canonical relative spelling, as FORAGER is sent it."""
    if not name or len(name) > FILENAME_MAX:
        raise BadRequest("files", f"a file part's filename must be 1 to {FILENAME_MAX} characters.")
    try:
        return file_name(name)
    except PathRefused as refused:
        raise BadRequest("files", f"the filename '{shown(name)}' is refused: {refused.reason}.") from refused


def flag(fields: dict[str, str], name: str) -> bool:
    value = fields.get(name, "false")  # exactly as the document's enum says: not " TRUE "
    if value not in ("true", "false"):
        raise BadRequest(name, "must be true or false.")
    return value == "true"
