"""Reading a ``multipart/form-data`` body the way the upstream contract writes it, as it arrives.

The framing (delimiters, parts, header lines, where a part's bytes end) and the
``Content-Disposition`` parameters are ``python-multipart``'s: a quoted ``filename`` holding
``;`` or ``=`` is one parameter, never two. A file part's ``filename`` arrives percent-encoded
(RFC 7578 §4.2; docs/upstream-contract.md, "Ingestion": every byte of the name's UTF-8 that is
not an ASCII letter, digit or one of ``-._~/`` is ``%XX``) and is decoded here once, strictly:
a malformed escape or bytes that are not UTF-8 refuse the body. So the engine records exactly
the name the edge accepted (``tests/contract/test_upload_names_contract.py``).

The body is read chunk by chunk (:func:`read`): a text field's bytes are kept, a file part's are
handed to a :class:`FileSink` as they come (an upload's staging folder writes them to disk), so
an upload of 100 MB holds a chunk of it at a time, never the whole. The refusals are those of
the body read whole, in the same order: a body the parser cannot read, then one that ends
early, then one with no part, then the first part whose headers are wrong.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol
from urllib.parse import unquote_to_bytes

from python_multipart import MultipartParser
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartState, parse_options_header

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

_ESCAPE_OR_PERCENT = re.compile(rb"%(?![0-9A-Fa-f]{2})")


class FormRefused(ValueError):
    """The body is not a form this engine reads; the message says why."""


@dataclass(frozen=True)
class Part:
    """One part of the form: its field name, its decoded filename (None for a text field), its
    size, and a text field's bytes (a file part's went to the sink; :func:`parse` keeps them)."""

    name: str
    filename: str | None
    size: int
    data: bytes = b""


class FileSink(Protocol):
    """Where a form's file parts go, in order, as they arrive."""

    def begin(self, number: int) -> None:
        """File part ``number`` (0, 1, … in the body's order) starts."""

    def write(self, data: bytes) -> None:
        """The next bytes of the file part begun."""

    def end(self) -> None:
        """The file part begun is whole."""


class _Reading:
    """One body's parts as the parser reports them: each part's headers, then its bytes to the
    sink (a file) or kept (a text field). A part whose headers are wrong keeps its refusal for
    the end (the framing's refusals come first) and its bytes are dropped."""

    def __init__(self, files: FileSink) -> None:
        self.files = files
        self.parts: list[Part | FormRefused] = []
        self._headers: list[tuple[bytes, bytes]] = []
        self._field = b""
        self._value = b""
        self._text: list[bytes] | None = None  # the text field's bytes, while one is read
        self._size = 0
        self._files_begun = 0

    def callbacks(self) -> MultipartCallbacks:
        return {
            "on_part_begin": self._part_begin,
            "on_header_field": self._header_field,
            "on_header_value": self._header_value,
            "on_header_end": self._header_end,
            "on_headers_finished": self._headers_finished,
            "on_part_data": self._part_data,
            "on_part_end": self._part_end,
        }

    def _part_begin(self) -> None:
        self._headers = []
        self._text = None
        self._size = 0

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]

    def _header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def _header_end(self) -> None:
        self._headers.append((self._field, self._value))
        self._field = self._value = b""

    def _headers_finished(self) -> None:
        try:
            part = _part(self._headers)
        except FormRefused as refused:
            self.parts.append(refused)
            return
        self.parts.append(part)
        if part.filename is None:
            self._text = []
        else:
            self.files.begin(self._files_begun)
            self._files_begun += 1

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        current = self.parts[-1] if self.parts else None
        if not isinstance(current, Part):
            return
        self._size += end - start
        if self._text is not None:
            self._text.append(data[start:end])
        else:
            self.files.write(data[start:end])

    def _part_end(self) -> None:
        current = self.parts[-1] if self.parts else None
        if not isinstance(current, Part):
            return
        if self._text is None:
            self.files.end()
            self.parts[-1] = replace(current, size=self._size)
        else:
            self.parts[-1] = replace(current, size=self._size, data=b"".join(self._text))


def read(chunks: Iterable[bytes], boundary: str, files: FileSink) -> list[Part]:
    """The parts of the form framed by ``boundary`` whose body is ``chunks``, each file part's
    bytes handed to ``files`` as they arrive and its name decoded; a :class:`FormRefused` if the
    body is not such a form (its file parts may then be partly written: the caller drops them)."""
    reading = _Reading(files)
    parser = MultipartParser(boundary.encode("latin-1"), reading.callbacks())
    for chunk in chunks:
        try:
            parser.write(chunk)
        except MultipartParseError as error:
            raise FormRefused(f"The multipart body cannot be read ({error}).") from None
    if parser.state != MultipartState.END:
        raise FormRefused("The multipart body ends early.")
    if not reading.parts:
        raise FormRefused("The multipart body has no part.")
    for part in reading.parts:
        if isinstance(part, FormRefused):
            raise part
    return [p for p in reading.parts if isinstance(p, Part)]


def _part(headers: list[tuple[bytes, bytes]]) -> Part:
    disposition = next((v for k, v in headers if k.strip().lower() == b"content-disposition"), None)
    if disposition is None:
        raise FormRefused("A part has no Content-Disposition.")
    kind, params = parse_options_header(disposition)
    if kind != b"form-data" or b"name" not in params:
        raise FormRefused("A part's Content-Disposition is not form-data naming a field.")
    name = params[b"name"].decode("latin-1")
    filename = params.get(b"filename")
    return Part(name, None if filename is None else decoded_filename(filename), 0)


def decoded_filename(value: bytes) -> str:
    """A ``filename`` parameter's bytes percent-decoded once, strictly (RFC 7578 §4.2)."""
    if _ESCAPE_OR_PERCENT.search(value):
        raise FormRefused("A filename has a '%' that starts no percent-encoded byte.")
    try:
        return unquote_to_bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        raise FormRefused("A filename is not percent-encoded UTF-8.") from None


class _Kept:
    """A sink that keeps each file part's bytes (:func:`parse`, for a body already in memory)."""

    def __init__(self) -> None:
        self.files: list[list[bytes]] = []

    def begin(self, number: int) -> None:
        self.files.append([])

    def write(self, data: bytes) -> None:
        self.files[-1].append(data)

    def end(self) -> None:
        pass


def parse(body: bytes, boundary: str) -> list[Part]:
    """The parts of ``body``, read whole: :func:`read` with each file part's bytes kept in ``data``."""
    kept = _Kept()
    parts = read([body], boundary, kept)
    held = iter(kept.files)
    return [p if p.filename is None else replace(p, data=b"".join(next(held))) for p in parts]
