"""The archive's multipart upload overlaps sending a part with reading the next, one part in
flight at most (``storage/archives.py`` ``ArchiveUpload``). Ordered by events, never by time; and
the receive that feeds it holds about three parts in memory whatever the archive's size."""

from __future__ import annotations

import hashlib
import threading
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from knowledge_service.domain.exports import receive
from knowledge_service.storage.archives import ArchiveUpload
from knowledge_service.upstream.client import ArchiveDownload

WAIT = 30.0  # only a bound against a hang: every wait below is released by an event


class GatedS3:
    """An S3 client whose ``upload_part`` holds each part until the test releases it."""

    def __init__(self, fail_part: int | None = None) -> None:
        self.fail_part = fail_part
        self.log: list[str] = []
        self.sending = {n: threading.Event() for n in range(1, 5)}
        self.release = {n: threading.Event() for n in range(1, 5)}

    def create_multipart_upload(self, **_: Any) -> dict[str, str]:
        return {"UploadId": "u1"}

    def upload_part(self, *, PartNumber: int, Body: bytes, **_: Any) -> dict[str, str]:
        self.log.append(f"send {PartNumber} begins")
        self.sending[PartNumber].set()
        assert self.release[PartNumber].wait(WAIT)
        if PartNumber == self.fail_part:
            raise ConnectionError("the network dropped part 2")
        self.log.append(f"send {PartNumber} ends")
        return {"ETag": f"e{PartNumber}"}

    def complete_multipart_upload(self, *, MultipartUpload: dict[str, Any], **_: Any) -> None:
        self.log.append(f"complete {[p['PartNumber'] for p in MultipartUpload['Parts']]}")

    def abort_multipart_upload(self, **_: Any) -> None:
        self.log.append("abort")


def test_a_part_is_sent_while_the_next_is_read_and_never_two_at_once() -> None:
    s3 = GatedS3()
    upload = ArchiveUpload(s3, "bucket", "exports/e/sha")
    upload.part(b"one")  # returns while part 1 is still being sent
    assert s3.sending[1].wait(WAIT)
    s3.log.append("reading part 2")
    s3.release[1].set()
    upload.part(b"two")  # waits for part 1 to have gone, then sends part 2 in turn
    assert s3.sending[2].wait(WAIT)
    s3.release[2].set()
    upload.complete()
    assert s3.log == [
        "send 1 begins",
        "reading part 2",
        "send 1 ends",
        "send 2 begins",
        "send 2 ends",
        "complete [1, 2]",
    ]


def test_a_part_that_fails_in_flight_is_raised_at_the_next_step_and_the_upload_is_aborted() -> None:
    s3 = GatedS3(fail_part=2)
    upload = ArchiveUpload(s3, "bucket", "exports/e/sha")
    s3.release[1].set()
    upload.part(b"one")
    upload.part(b"two")
    s3.release[2].set()
    with pytest.raises(ConnectionError):
        upload.part(b"three")
    upload.abort()
    upload.abort()  # twice is safe
    assert s3.log[-1] == "abort" and s3.log.count("abort") == 1
    assert not any(line.startswith("complete") or line == "send 3 begins" for line in s3.log)


def test_an_abort_waits_for_the_part_in_flight_before_dropping_the_upload() -> None:
    s3 = GatedS3()
    upload = ArchiveUpload(s3, "bucket", "exports/e/sha")
    upload.part(b"one")
    assert s3.sending[1].wait(WAIT)
    aborting = threading.Thread(target=upload.abort)
    aborting.start()
    s3.release[1].set()
    aborting.join(WAIT)
    assert s3.log == ["send 1 begins", "send 1 ends", "abort"]


class DroppingS3:
    """An S3 client that takes each part (a moment on the wire) and keeps nothing of it."""

    def __init__(self) -> None:
        self.parts: list[int] = []

    def create_multipart_upload(self, **_: Any) -> dict[str, str]:
        return {"UploadId": "u1"}

    def upload_part(self, *, PartNumber: int, Body: bytes, **_: Any) -> dict[str, str]:
        time.sleep(0.002)
        self.parts.append(len(Body))
        return {"ETag": f"e{PartNumber}"}

    def complete_multipart_upload(self, **_: Any) -> None:
        pass

    def abort_multipart_upload(self, **_: Any) -> None:
        pass


def test_receiving_an_archive_holds_about_three_parts_in_memory_whatever_its_size() -> None:
    part, chunk, parts = 1024 * 1024, 64 * 1024, 24

    def chunks() -> Iterator[bytes]:
        for n in range(parts * part // chunk):
            yield bytes([n % 251]) * chunk

    digest = hashlib.sha256()
    for piece in chunks():
        digest.update(piece)
    sha256 = digest.hexdigest()
    s3 = DroppingS3()

    class Forager:
        @contextmanager
        def download_archive(self, export_id: str) -> Iterator[ArchiveDownload]:
            yield ArchiveDownload(announced_sha256=sha256, content_disposition="", chunks=chunks())

    class Archives:
        def begin(self, key: str) -> ArchiveUpload:
            return ArchiveUpload(s3, "bucket", key)

    tracemalloc.start()
    try:
        assert receive(Forager(), Archives(), "exp_1", "exports/exp_1", sha256, parts * part, part) == sha256  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the part being sent, the part being filled and the copy handed over (plus a chunk and the
    # bytearray's growth): 24 MiB received, never more than ~3.5 parts held
    assert peak < 3.5 * part + 2 * chunk, peak / part
    assert s3.parts == [part] * parts
