"""A ``multipart/form-data`` body written as it is sent, never held whole.

Each file part is named with its length and a way to open its bytes as an iterator of
chunks, so a batch staged in S3 travels to FORAGER one chunk at a time: the body's
``Content-Length`` is known before the first byte leaves, and the memory it takes is one
chunk, whatever the batch weighs.

A file part's ``filename`` is written percent-encoded (RFC 7578 §4.2, docs/upstream-contract.md,
"Ingestion"): every byte of the name's UTF-8 that is not an ASCII letter, digit or one of
``-._~/`` is ``%XX`` (upper-case hex), so the quoted parameter holds no ``;``, ``"``, ``=``,
``\\``, space or control byte a header parser could read two ways; the engine decodes it with a
real multipart parser and records exactly the name the fence accepted.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

CRLF = b"\r\n"


@dataclass(frozen=True)
class FilePart:
    """One file of a batch: its relative name, its length, and how to read its bytes."""

    filename: str
    size: int
    open: Callable[[], Iterable[bytes]]


class MultipartBody:
    """Form fields, then file parts, as one streamed body with a known length."""

    def __init__(
        self, fields: list[tuple[str, str]], files: list[FilePart], *, file_field: str = "files", boundary: str = ""
    ) -> None:
        self.boundary = boundary or "ks-" + secrets.token_hex(16)
        self._fields = fields
        self._files = files
        self._file_field = file_field

    @property
    def content_type(self) -> str:
        return f"multipart/form-data; boundary={self.boundary}"

    def _field_head(self, name: str) -> bytes:
        return f'--{self.boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()

    def _file_head(self, part: FilePart) -> bytes:
        filename = encoded_filename(part.filename)
        return (
            f"--{self.boundary}\r\nContent-Disposition: form-data; "
            f'name="{self._file_field}"; filename="{filename}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()

    def _closing(self) -> bytes:
        return f"--{self.boundary}--\r\n".encode()

    def __len__(self) -> int:
        total = sum(len(self._field_head(n)) + len(v.encode()) + 2 for n, v in self._fields)
        total += sum(len(self._file_head(p)) + p.size + 2 for p in self._files)
        return total + len(self._closing())

    def __iter__(self) -> Iterator[bytes]:
        for name, value in self._fields:
            yield self._field_head(name) + value.encode() + CRLF
        for part in self._files:
            yield self._file_head(part)
            sent = 0
            for chunk in part.open():
                sent += len(chunk)
                if sent > part.size:
                    raise ValueError(f"{part.filename} is longer than its declared {part.size} bytes")
                yield chunk
            if sent != part.size:
                raise ValueError(f"{part.filename} is {sent} bytes, not its declared {part.size}")
            yield CRLF
        yield self._closing()


FILENAME_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")
"""The bytes a filename keeps as they are on the wire; every other byte is ``%XX``."""


def encoded_filename(filename: str) -> str:
    """``filename`` as the Content-Disposition's ``filename`` parameter carries it: its UTF-8,
    each byte outside :data:`FILENAME_SAFE` percent-encoded in upper-case hex (RFC 7578 §4.2)."""
    return "".join(chr(b) if b in FILENAME_SAFE else f"%{b:02X}" for b in filename.encode("utf-8"))
