"""Staged uploads in S3: an upload session's manifest and the parts its caller PUTs.

A batch too large for API Gateway (10 MB) and Lambda (6 MB) is staged here: the session's
manifest at ``staged/<session>/manifest.json``, each file at ``staged/<session>/<n>``,
written by the caller through presigned PUTs whose ``Content-Length`` is signed (S3
refuses a part of any other length). The bucket's lifecycle rule removes what is left under
``staged/`` after a day; a committed session removes its own at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from knowledge_service.storage.toolkit import if_found

STAGED_PREFIX = "staged/"
CHUNK_BYTES = 1024 * 1024
"""What one read from S3 holds: the most of a part the forwarding Lambda keeps at once."""


def session_prefix(session_id: str) -> str:
    return f"{STAGED_PREFIX}{session_id}/"


def part_key(session_id: str, index: int) -> str:
    return f"{session_prefix(session_id)}{index:04d}"


class StagingStore:
    def __init__(self, s3: Any, bucket: str) -> None:
        self._s3 = s3
        self._bucket = bucket

    def save_manifest(self, session_id: str, manifest: dict[str, Any]) -> None:
        self._s3.put_object(
            Bucket=self._bucket,
            Key=session_prefix(session_id) + "manifest.json",
            Body=json.dumps(manifest, separators=(",", ":")).encode(),
            ContentType="application/json",
        )

    def manifest(self, session_id: str) -> dict[str, Any] | None:
        answer = if_found(
            lambda: self._s3.get_object(Bucket=self._bucket, Key=session_prefix(session_id) + "manifest.json")
        )
        if answer is None:
            return None
        loaded: dict[str, Any] = json.loads(answer["Body"].read())
        return loaded

    def presigned_put(self, key: str, size: int, expires_seconds: int) -> str:
        url: str = self._s3.generate_presigned_url(
            "put_object",
            Params={"Bucket": self._bucket, "Key": key, "ContentLength": size},
            ExpiresIn=expires_seconds,
            HttpMethod="PUT",
        )
        return url

    def size_of(self, key: str) -> int | None:
        """The staged part's length, or None when it was never PUT."""
        head = if_found(lambda: self._s3.head_object(Bucket=self._bucket, Key=key))
        return None if head is None else int(head["ContentLength"])

    def chunks(self, key: str) -> Iterator[bytes]:
        """The part's bytes, one bounded read at a time (never the whole part)."""
        body = self._s3.get_object(Bucket=self._bucket, Key=key)["Body"]
        try:
            yield from body.iter_chunks(chunk_size=CHUNK_BYTES)
        finally:
            body.close()

    def discard(self, session_id: str, part_keys: list[str]) -> None:
        """Remove the session's parts and manifest (the lifecycle rule is the backstop)."""
        keys = [*part_keys, session_prefix(session_id) + "manifest.json"]
        for start in range(0, len(keys), 1000):
            self._s3.delete_objects(
                Bucket=self._bucket,
                Delete={"Objects": [{"Key": key} for key in keys[start : start + 1000]], "Quiet": True},
            )
