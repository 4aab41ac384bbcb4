"""The streaming check an export archive passes before anyone is handed it.

S3 verifies no whole-object SHA-256 on a multipart upload and moto verifies no checksum at
all, so this is the check: every byte FORAGER sends is hashed as it arrives, the body may
not run past the recorded size (an over-long body is refused at the first extra byte, not
after it was all received), and at the end the digest must equal both the one the export
recorded and the one FORAGER sent beside the bytes, and the size the recorded size. The digest
sent beside the bytes can be held to the recorded one before the body is read (:meth:`announced`).
"""

from __future__ import annotations

import hashlib
import re

from knowledge_service.errors import UpstreamMismatch

SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


class ArchiveDigest:
    """SHA-256 and size of an archive as it streams, held to what was recorded."""

    def __init__(self, recorded_sha256: str, recorded_size: int, announced_sha256: str) -> None:
        if not SHA256_HEX.match(recorded_sha256):
            raise UpstreamMismatch("The export's recorded digest is not a SHA-256; nothing was handed over.")
        if recorded_size < 0:
            raise UpstreamMismatch("The export's recorded size is negative; nothing was handed over.")
        self.recorded_sha256 = recorded_sha256
        self.recorded_size = recorded_size
        self.announced_sha256 = announced_sha256.strip().lower()
        self._hash = hashlib.sha256()
        self.size = 0

    def announced(self) -> None:
        """Before a byte is read: a digest FORAGER sent beside the bytes must be the recorded one
        (the check :meth:`verify` ends with), so a body that cannot verify is not received. None
        sent is left to :meth:`verify`, after the body (whose transport may fail first)."""
        if self.announced_sha256 and self.announced_sha256 != self.recorded_sha256:
            raise UpstreamMismatch(
                "The SHA-256 FORAGER sent beside the archive is not the one the export recorded; "
                "nothing was handed over."
            )

    def update(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.recorded_size:
            raise UpstreamMismatch(
                f"FORAGER sent more than the {self.recorded_size} bytes the export recorded; nothing was handed over."
            )
        self._hash.update(chunk)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()

    def verify(self) -> str:
        """The digest, when every check holds; ``UpstreamMismatch`` naming the first that fails."""
        if self.size != self.recorded_size:
            raise UpstreamMismatch(
                f"FORAGER sent {self.size} bytes; the export recorded {self.recorded_size}. Nothing was handed over."
            )
        digest = self.hexdigest()
        if digest != self.recorded_sha256:
            raise UpstreamMismatch("The archive's SHA-256 is not the one the export recorded; nothing was handed over.")
        if self.announced_sha256 != self.recorded_sha256:
            raise UpstreamMismatch(
                "The SHA-256 FORAGER sent beside the archive is not the one the export recorded; "
                "nothing was handed over."
            )
        return digest
