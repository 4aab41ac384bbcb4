"""Whole-base archives of a project's knowledge base in S3, and the bus event that asks for one.

An archive is kept at ``kb-archives/<project>/<generation>.tar.gz`` in the archive bucket, where
the generation is the base's write generation when its pages were read: a base that changed
since has another generation, so another key, and a new build. The object exists only once it
was written whole: it is a multipart upload (``storage/archives.py``'s ``ArchiveUpload``)
completed after its last byte and aborted on any failure. The bucket's lifecycle rule
``kb-archives-expire`` removes archives after a day (a newer generation's replaces them long
before).

Asking for a build is one ``kb.archive.requested`` event on the knowledge bus (source
``knowledge-service.kb-archive``), which the template's ``KbArchiveFunction`` rule receives.
"""

from __future__ import annotations

import json

from knowledge_service.errors import InternalError
from knowledge_service.storage.archives import ArchiveObjects, ArchiveUpload

PREFIX = "kb-archives/"
SOURCE = "knowledge-service.kb-archive"
REQUESTED = "kb.archive.requested"
PART_BYTES = 8 * 1024 * 1024  # S3's parts are at least 5 MiB but the last


def archive_key(project: str, generation: int) -> str:
    return f"{PREFIX}{project}/{generation}.tar.gz"


class PartSink:
    """A write-only file object that sends what it is given as the parts of one multipart upload,
    ``part_bytes`` at a time: memory holds the part being filled and the one being sent."""

    def __init__(self, upload: ArchiveUpload, part_bytes: int = PART_BYTES) -> None:
        self._upload = upload
        self._part_bytes = part_bytes
        self._buffer = bytearray()
        self.size = 0

    def write(self, data: bytes) -> int:
        self._buffer += data
        self.size += len(data)
        while len(self._buffer) >= self._part_bytes:
            self._upload.part(bytes(self._buffer[: self._part_bytes]))
            del self._buffer[: self._part_bytes]
        return len(data)

    def flush(self) -> None:
        """Nothing to do: a part goes when it is full, the last one at :meth:`finish`."""

    def finish(self) -> None:
        if self._buffer or self.size == 0:
            self._upload.part(bytes(self._buffer))
        self._buffer.clear()
        self._upload.complete()


class KbArchiveStore(ArchiveObjects):
    """The archive objects of every project's base, and the bus that asks for their builds."""

    def read(self, key: str) -> bytes:
        """An archive's bytes whole (tests and the local stack's checks only: archives are handed over by URL)."""
        return bytes(self._s3.get_object(Bucket=self.bucket, Key=key)["Body"].read())

    def request(self, project: str, generation: int) -> None:
        """Ask for ``project``'s archive at ``generation`` (the builder takes it from the bus)."""
        if not self._bus:
            raise InternalError("This function is not configured with the knowledge bus.")
        answer = self._events.put_events(
            Entries=[
                {
                    "Source": SOURCE,
                    "DetailType": REQUESTED,
                    "EventBusName": self._bus,
                    "Detail": json.dumps({"project": project, "generation": generation}),
                }
            ]
        )
        if answer.get("FailedEntryCount"):
            raise InternalError("The archive's build could not be asked for on the knowledge bus.")
