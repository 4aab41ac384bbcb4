"""Reading an inline ``multipart/form-data`` upload (RFC 7578), bounded before it is read.

The body an inline upload carries is at most what Lambda takes (6 MB); it is refused by
length before a byte is parsed. Fields are the upload's own (``project``, ``force``,
``admission_job_id``) and file parts named ``files``; anything else is refused by name. A
file part's filename is a relative name, held to the workspace path fence's rules
(``workspace_paths.file_name``), as the upload session's names are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge_service.domain.workspace_paths import PathRefused, file_name, shown
from knowledge_service.errors import BadRequest

FILENAME_MAX = 1024
FIELD_MAX = 256
_BOUNDARY = re.compile(r"^[0-9A-Za-z'()+_,\-./:=? ]{1,70}$")
_PARAM = re.compile(r';\s*([A-Za-z*]+)="((?:[^"\\]|\\.)*)"|;\s*([A-Za-z*]+)=([^;\s]+)')


@dataclass(frozen=True)
class InlineFile:
    filename: str
    data: bytes


@dataclass(frozen=True)
class Form:
    fields: dict[str, str]
    files: list[InlineFile]


def boundary_of(content_type: str) -> str:
    kind, _, rest = content_type.partition(";")
    if kind.strip().lower() != "multipart/form-data":
        raise BadRequest("Content-Type", "must be multipart/form-data (or application/json naming a session_id).")
    params = _params(";" + rest)
    boundary = params.get("boundary", "")
    if not _BOUNDARY.match(boundary) or boundary.endswith(" "):
        raise BadRequest("Content-Type", "names no valid multipart boundary.")
    return boundary


def parse_form(body: bytes, content_type: str, allowed_fields: frozenset[str]) -> Form:
    """The form's fields and files, or a 400 naming what is wrong."""
    delimiter = b"--" + boundary_of(content_type).encode("ascii")
    position = body.find(delimiter)
    if position != 0 and body[:position].strip() != b"":
        raise BadRequest("body", "is not a multipart body with the boundary its Content-Type names.")
    if position < 0:
        raise BadRequest("body", "is not a multipart body with the boundary its Content-Type names.")
    fields: dict[str, str] = {}
    files: list[InlineFile] = []
    while True:
        position += len(delimiter)
        if body[position : position + 2] == b"--":
            return Form(fields, files)
        if body[position : position + 2] != b"\r\n":
            raise BadRequest("body", "has a multipart delimiter not followed by a line break.")
        head_end = body.find(b"\r\n\r\n", position)
        end = body.find(b"\r\n" + delimiter, head_end + 4) if head_end >= 0 else -1
        if head_end < 0 or end < 0:
            raise BadRequest("body", "ends before its closing multipart delimiter.")
        name, filename = _disposition(body[position + 2 : head_end])
        content = body[head_end + 4 : end]
        if filename is not None:
            if name != "files":
                raise BadRequest(name, "is not a file field of this request (file parts are named files).")
            files.append(InlineFile(_filename(filename), content))
        else:
            _add_field(fields, name, content, allowed_fields)
        position = end + 2


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


def _disposition(head: bytes) -> tuple[str, str | None]:
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("body", "has a part whose headers are not UTF-8.") from None
    for line in text.split("\r\n"):
        header, _, value = line.partition(":")
        if header.strip().lower() != "content-disposition":
            continue
        kind, _, rest = value.partition(";")
        if kind.strip().lower() != "form-data":
            break
        params = _params(";" + rest)
        if "name" not in params:
            break
        return params["name"], params.get("filename")
    raise BadRequest("body", "has a part without a form-data Content-Disposition naming it.")


def _params(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for quoted_name, quoted, bare_name, bare in _PARAM.findall(text):
        name = (quoted_name or bare_name).lower()
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
