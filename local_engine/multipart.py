"""Reading a ``multipart/form-data`` body the way the upstream contract writes it.

The framing (delimiters, parts, header lines, where a part's bytes end) and the
``Content-Disposition`` parameters are ``python-multipart``'s: a quoted ``filename`` holding
``;`` or ``=`` is one parameter, never two. A file part's ``filename`` arrives percent-encoded
(RFC 7578 §4.2; docs/upstream-contract.md, "Ingestion": every byte of the name's UTF-8 that is
not an ASCII letter, digit or one of ``-._~/`` is ``%XX``) and is decoded here once, strictly:
a malformed escape or bytes that are not UTF-8 refuse the body. So the engine records exactly
the name the edge accepted (``tests/contract/test_upload_names_contract.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote_to_bytes

from python_multipart import MultipartParser
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartState, parse_options_header

_ESCAPE_OR_PERCENT = re.compile(rb"%(?![0-9A-Fa-f]{2})")


class FormRefused(ValueError):
    """The body is not a form this engine reads; the message says why."""


@dataclass(frozen=True)
class Part:
    """One part of the form: its field name, its decoded filename (None for a text field) and bytes."""

    name: str
    filename: str | None
    data: bytes


@dataclass
class _Raw:
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    data: list[bytes] = field(default_factory=list)


def parse(body: bytes, boundary: str) -> list[Part]:
    """The parts of ``body``, a form framed by ``boundary``, each file part's name decoded."""
    raws: list[_Raw] = []
    header = [b"", b""]

    def on_header_field(data: bytes, start: int, end: int) -> None:
        header[0] += data[start:end]

    def on_header_value(data: bytes, start: int, end: int) -> None:
        header[1] += data[start:end]

    def on_header_end() -> None:
        raws[-1].headers.append((header[0], header[1]))
        header[0] = header[1] = b""

    parser = MultipartParser(
        boundary.encode("latin-1"),
        {
            "on_part_begin": lambda: raws.append(_Raw()),
            "on_part_data": lambda data, start, end: raws[-1].data.append(data[start:end]),
            "on_header_field": on_header_field,
            "on_header_value": on_header_value,
            "on_header_end": on_header_end,
        },
    )
    try:
        parser.write(body)
    except MultipartParseError as error:
        raise FormRefused(f"The multipart body cannot be read ({error}).") from None
    if parser.state != MultipartState.END:
        raise FormRefused("The multipart body ends early.")
    if not raws:
        raise FormRefused("The multipart body has no part.")
    return [_part(raw) for raw in raws]


def _part(raw: _Raw) -> Part:
    disposition = next((v for k, v in raw.headers if k.strip().lower() == b"content-disposition"), None)
    if disposition is None:
        raise FormRefused("A part has no Content-Disposition.")
    kind, params = parse_options_header(disposition)
    if kind != b"form-data" or b"name" not in params:
        raise FormRefused("A part's Content-Disposition is not form-data naming a field.")
    name = params[b"name"].decode("latin-1")
    filename = params.get(b"filename")
    return Part(name, None if filename is None else decoded_filename(filename), b"".join(raw.data))


def decoded_filename(value: bytes) -> str:
    """A ``filename`` parameter's bytes percent-decoded once, strictly (RFC 7578 §4.2)."""
    if _ESCAPE_OR_PERCENT.search(value):
        raise FormRefused("A filename has a '%' that starts no percent-encoded byte.")
    try:
        return unquote_to_bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        raise FormRefused("A filename is not percent-encoded UTF-8.") from None
