"""What every format writes through (``archives.py``, step 3): a file that hashes each byte as it is
written, gzip written as members one after another, and the padding's bytes."""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Iterator
from typing import IO, Any

PADDING_NAME = "padding.bin"
LEVEL = 6
BLOCK = 1024 * 1024
FILL = hashlib.shake_256(b"forager export padding").hexdigest(BLOCK // 2).encode("ascii")
"""The padding's bytes: 1 MiB of hex text (valid inside a JSON string), repeated."""


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
