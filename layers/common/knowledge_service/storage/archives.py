"""Verified export archives in S3, and the lease that lets one request verify an archive.

An archive is kept at ``exports/<export_id>/<sha256>``: the object exists there only once it
was received whole and its digest and size checked, because it is written as a multipart
upload that is *completed* only after the check (``ArchiveUpload.complete``) and aborted on
any failure (``ArchiveUpload.abort``). S3 verifies no whole-object SHA-256 on a multipart
upload (and moto verifies no checksum at all): the domain's streaming hash is the check.

The lease (``pk=archive_lease, sk=<export_id>`` in the config table) is taken with a
conditional write, so of two requests for the same unverified archive one receives it and
the other is told it is not ready yet.
"""

from __future__ import annotations

import contextlib
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr

from knowledge_service.storage.toolkit import conditionally, if_found

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource

LEASE_PK = "archive_lease"
PRESIGNED_SECONDS = 300
PREFIX = "exports/"


def archive_key(export_id: str, sha256: str) -> str:
    return f"{PREFIX}{export_id}/{sha256}"


class ArchiveUpload:
    """One multipart upload to the archive's final key, completed only when told.

    A part is sent on a thread of its own while the caller reads the next one, so receiving,
    hashing and sending overlap, with at most one part in flight: :meth:`part` first waits for
    the part before it (and raises that part's failure), so memory holds at most the part being
    sent and the one being filled.
    """

    def __init__(self, s3: Any, bucket: str, key: str) -> None:
        self._s3 = s3
        self._bucket = bucket
        self.key = key
        self.upload_id: str = s3.create_multipart_upload(
            Bucket=bucket, Key=key, ContentType="application/octet-stream"
        )["UploadId"]
        self._parts: list[dict[str, Any]] = []
        self._sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="archive-part")
        self._in_flight: Future[None] | None = None
        self._open = True

    def part(self, data: bytes) -> None:
        """Send ``data`` as the next part once the part before it has gone."""
        self._settle()
        number = len(self._parts) + 1
        self._in_flight = self._sender.submit(self._send, number, data)

    def _send(self, number: int, data: bytes) -> None:
        answer = self._s3.upload_part(
            Bucket=self._bucket, Key=self.key, UploadId=self.upload_id, PartNumber=number, Body=data
        )
        self._parts.append({"PartNumber": number, "ETag": answer["ETag"]})

    def _settle(self) -> None:
        """Wait for the part in flight; its failure is raised here."""
        in_flight, self._in_flight = self._in_flight, None
        if in_flight is not None:
            in_flight.result()

    def complete(self) -> None:
        self._settle()
        self._s3.complete_multipart_upload(
            Bucket=self._bucket, Key=self.key, UploadId=self.upload_id, MultipartUpload={"Parts": self._parts}
        )
        self._open = False
        self._sender.shutdown()

    def abort(self) -> None:
        """Drop every part uploaded so far; nothing reaches the key. Safe to call twice."""
        if not self._open:
            return
        self._open = False
        with contextlib.suppress(Exception):  # the part in flight ends before the upload is dropped
            self._settle()
        self._sender.shutdown()
        self._s3.abort_multipart_upload(Bucket=self._bucket, Key=self.key, UploadId=self.upload_id)


class ArchiveStore:
    def __init__(self, s3: Any, bucket: str, resource: DynamoDBServiceResource, config_table: str) -> None:
        self._s3 = s3
        self.bucket = bucket
        self._leases = resource.Table(config_table)

    # ------------------------------------------------------------------ objects
    def size_of(self, key: str) -> int | None:
        """The verified archive's size, or None when there is none at ``key``."""
        head = if_found(lambda: self._s3.head_object(Bucket=self.bucket, Key=key))
        return None if head is None else int(head["ContentLength"])

    def begin(self, key: str) -> ArchiveUpload:
        return ArchiveUpload(self._s3, self.bucket, key)

    def remove(self, key: str) -> None:
        self._s3.delete_object(Bucket=self.bucket, Key=key)

    def presigned_url(self, key: str, file_name: str, seconds: int = PRESIGNED_SECONDS) -> str:
        return str(
            self._s3.generate_presigned_url(
                "get_object",
                Params={
                    "Bucket": self.bucket,
                    "Key": key,
                    "ResponseContentDisposition": f'attachment; filename="{file_name}"',
                    "ResponseCacheControl": "no-store",
                },
                ExpiresIn=seconds,
            )
        )

    def open_uploads(self, prefix: str = PREFIX) -> list[str]:
        """The keys with a multipart upload still open under ``prefix`` (tests, upkeep)."""
        answer = self._s3.list_multipart_uploads(Bucket=self.bucket, Prefix=prefix)
        return [str(u["Key"]) for u in answer.get("Uploads", [])]

    # ------------------------------------------------------------------ the lease
    def claim(self, export_id: str, owner: str, lease_seconds: int) -> bool:
        """Take the right to verify ``export_id``'s archive; False while another holds it."""
        now = int(time.time())
        return conditionally(
            lambda: self._leases.put_item(
                Item={"pk": LEASE_PK, "sk": export_id, "owner": owner, "expires": now + lease_seconds},
                ConditionExpression=Attr("sk").not_exists() | Attr("expires").lt(now),
            )
        )

    def release(self, export_id: str, owner: str) -> None:
        conditionally(
            lambda: self._leases.delete_item(
                Key={"pk": LEASE_PK, "sk": export_id}, ConditionExpression=Attr("owner").eq(owner)
            )
        )
