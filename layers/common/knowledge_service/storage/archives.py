"""Verified export archives in S3, the verification a download asks for, and the lease that
lets one verifier receive an archive.

An archive is kept at ``exports/<export_id>/<sha256>``: the object exists there only once it
was received whole and its digest and size checked, because it is written as a multipart
upload that is *completed* only after the check (``ArchiveUpload.complete``) and aborted on
any failure (``ArchiveUpload.abort``). S3 verifies no whole-object SHA-256 on a multipart
upload (and moto verifies no checksum at all): the domain's streaming hash is the check.

Two rows of the config table per export being verified:

- ``pk=archive_verification, sk=<export_id>``: what the downloads know. ``requested`` until
  ``expires`` (a download asked the verifier, by an event on the bus: :meth:`ArchiveStore.ask`
  puts the row with a conditional write and only the request that wrote it puts the event, so
  polling does not flood the bus); ``failed`` until ``expires`` (the verifier found the archive
  wrong or gone: every download meanwhile answers that failure). The verifier deletes it when
  it is done (:meth:`ArchiveStore.settle`).
- ``pk=archive_lease, sk=<export_id>``: taken with a conditional write by the verifier that
  receives the archive, so of two verifications of the same archive one receives it.
"""

from __future__ import annotations

import contextlib
import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from boto3.dynamodb.conditions import Attr

from knowledge_service.storage.toolkit import conditionally, if_found

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource

LEASE_PK = "archive_lease"
VERIFICATION_PK = "archive_verification"
VERIFICATION_SOURCE = "knowledge-service.exports"
VERIFICATION_DETAIL_TYPE = "knowledge.export.verification_requested"
FailureCode = Literal["upstream_mismatch", "gone"]
PRESIGNED_SECONDS = 300
PREFIX = "exports/"


def archive_key(export_id: str, sha256: str) -> str:
    return f"{PREFIX}{export_id}/{sha256}"


@dataclass(frozen=True)
class VerificationFailure:
    """A verification that failed for a reason asking again would not change, and until when
    every download answers it."""

    code: FailureCode
    message: str
    until: int


class VerificationNotAsked(Exception):
    """The bus did not take the verification's event (the request row was taken back)."""


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


class ArchiveObjects:
    """Archives kept in one bucket, each written whole by a multipart upload, and the bus that
    asks for their builds (the exports' and the knowledge bases' stores are both this)."""

    def __init__(self, s3: Any, bucket: str, events: Any = None, bus: str = "") -> None:
        self._s3 = s3
        self.bucket = bucket
        self._events = events
        self._bus = bus

    def size_of(self, key: str) -> int | None:
        """The size of the archive at ``key``, or None when there is none (it exists only whole)."""
        head = if_found(lambda: self._s3.head_object(Bucket=self.bucket, Key=key))
        return None if head is None else int(head["ContentLength"])

    def begin(self, key: str) -> ArchiveUpload:
        return ArchiveUpload(self._s3, self.bucket, key)


class ArchiveStore(ArchiveObjects):
    """The exports' verified archives, their presigned downloads, and the lease that lets one
    verification receive an archive at a time."""

    def __init__(
        self,
        s3: Any,
        bucket: str,
        resource: DynamoDBServiceResource,
        config_table: str,
        events: Any = None,
        bus: str = "",
    ) -> None:
        super().__init__(s3, bucket, events, bus)
        self._leases = resource.Table(config_table)

    # ------------------------------------------------------------------ objects
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

    # ------------------------------------------------------------------ the verification asked for
    def failure(self, export_id: str, now: int) -> VerificationFailure | None:
        """The failure the last verification recorded, while it stands (``now`` before its end)."""
        item = self._leases.get_item(Key={"pk": VERIFICATION_PK, "sk": export_id}, ConsistentRead=True).get("Item")
        if not item or item.get("state") != "failed" or int(str(item["expires"])) < now:
            return None
        code: FailureCode = "gone" if item.get("code") == "gone" else "upstream_mismatch"
        return VerificationFailure(code, str(item.get("message", "")), int(str(item["expires"])))

    def ask(self, export_id: str, detail: dict[str, Any], now: int, window_seconds: int) -> bool:
        """Ask the verifier for ``export_id``'s archive, at most once per window: True when this
        call put the event, False when a request (or a failure) of the window still stands.

        The row is written first, conditionally, so of many downloads polling at once one puts
        the event; when the bus refuses the event the row is taken back (the next download asks
        again) and :class:`VerificationNotAsked` is raised.
        """
        token = f"{now}-{time.monotonic_ns()}"
        taken = conditionally(
            lambda: self._leases.put_item(
                Item={
                    "pk": VERIFICATION_PK,
                    "sk": export_id,
                    "state": "requested",
                    "token": token,
                    "requested_at": now,
                    "expires": now + window_seconds,
                },
                ConditionExpression=Attr("sk").not_exists() | Attr("expires").lt(now),
            )
        )
        if not taken:
            return False
        refused = self._put_event(detail)
        if refused is not None:
            conditionally(
                lambda: self._leases.delete_item(
                    Key={"pk": VERIFICATION_PK, "sk": export_id}, ConditionExpression=Attr("token").eq(token)
                )
            )
            raise VerificationNotAsked(refused)
        return True

    def _put_event(self, detail: dict[str, Any]) -> str | None:
        """The verification's event on the bus; why the bus did not take it, or None."""
        try:
            answer = self._events.put_events(
                Entries=[
                    {
                        "Source": VERIFICATION_SOURCE,
                        "DetailType": VERIFICATION_DETAIL_TYPE,
                        "EventBusName": self._bus,
                        "Detail": json.dumps(detail),
                    }
                ]
            )
        except Exception as error:  # the bus unreachable or refusing the call: told as a refusal
            return type(error).__name__
        if answer.get("FailedEntryCount"):
            return str((answer.get("Entries") or [{}])[0].get("ErrorMessage") or "the entry failed")
        return None

    def record_failure(
        self, export_id: str, code: FailureCode, message: str, now: int, hold_seconds: int
    ) -> VerificationFailure:
        """The verification failed for good: every download answers it for ``hold_seconds``."""
        until = now + hold_seconds
        self._leases.put_item(
            Item={
                "pk": VERIFICATION_PK,
                "sk": export_id,
                "state": "failed",
                "code": code,
                "message": message,
                "failed_at": now,
                "expires": until,
            }
        )
        return VerificationFailure(code, message, until)

    def settle(self, export_id: str) -> None:
        """The verification is over (the archive is in place, or there was none to verify): the
        next download that finds no archive asks again at once."""
        self._leases.delete_item(Key={"pk": VERIFICATION_PK, "sk": export_id})
