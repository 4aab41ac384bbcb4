"""Where page search keeps its index: snapshots in S3, the pointer, the overlay and the lease.

Beside the search rows and change markers the page store's write transaction lands
(``SROW#<project>`` / ``SCHG#<project>``, ``storage/page_store.py``), the pages table holds:

- ``SNAP#<project>`` / ``#``: the current snapshot's S3 key, its watermark (the newest change
  marker folded into it) and its row count. A snapshot's key is never reused (it names its
  watermark and a random part), so a copy cached in the function's ``/tmp`` is valid for as long
  as the pointer names its key;
- ``SLEASE#<project>`` / ``#``: the compactor's lease (one writer of snapshots per project).

Snapshots are SQLite files under ``search/<project>/`` in the archive bucket.
"""

from __future__ import annotations

import hashlib
import secrets
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Key

from knowledge_service.storage.toolkit import conditionally, if_found, query_pages

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource

_BATCH_READ = 100
_BATCH_WRITE = 25


@dataclass(frozen=True)
class Snapshot:
    key: str
    watermark: str
    rows: int


class SearchStore:
    def __init__(
        self,
        resource: DynamoDBServiceResource,
        table_name: str,
        s3: Any,
        bucket: str,
        cache_dir: Path | None = None,
    ) -> None:
        self._table: Any = resource.Table(table_name)
        self._client: Any = resource.meta.client
        self._s3 = s3
        self._bucket = bucket
        self._cache = cache_dir or Path(tempfile.gettempdir()) / "knowledge-search"

    # ------------------------------------------------------------------ the pointer
    def pointer(self, project: str) -> Snapshot | None:
        item = self._table.get_item(Key={"pk": f"SNAP#{project}", "sk": "#"}, ConsistentRead=True).get("Item")
        if not item:
            return None
        return Snapshot(str(item["key"]), str(item["watermark"]), int(item.get("rows", 0)))

    def swap(self, project: str, old: Snapshot | None, new: Snapshot) -> bool:
        """Point at ``new`` if the pointer still names ``old``: of two compactors one wins."""
        put: dict[str, Any] = {
            "Item": {"pk": f"SNAP#{project}", "sk": "#", "key": new.key, "watermark": new.watermark, "rows": new.rows}
        }
        if old is None:
            put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            put["ConditionExpression"] = "#k = :old"
            put["ExpressionAttributeNames"] = {"#k": "key"}
            put["ExpressionAttributeValues"] = {":old": old.key}
        return conditionally(lambda: self._table.put_item(**put))

    # ------------------------------------------------------------------ the overlay
    def changes_after(self, project: str, watermark: str, limit: int | None = None) -> list[tuple[str, str]]:
        """The change markers newer than ``watermark``, oldest first: ``(row id, path)``."""
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(f"SCHG#{project}") & Key("sk").gt(watermark or "0"),
            "ConsistentRead": True,
        }
        found: list[tuple[str, str]] = []
        for page in query_pages(self._table, **kwargs):
            found += [(str(i["sk"]), str(i["path"])) for i in page]
            if limit is not None and len(found) >= limit:
                break
        return found

    def rows(self, project: str, paths: set[str]) -> dict[str, dict[str, Any]]:
        """The current search rows of ``paths`` (a path with none is absent): one consistent
        batch read per hundred paths."""
        name = self._table.name
        wanted = sorted(paths)
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(wanted), _BATCH_READ):
            request: dict[str, Any] = {
                name: {
                    "Keys": [{"pk": f"SROW#{project}", "sk": p} for p in wanted[start : start + _BATCH_READ]],
                    "ConsistentRead": True,
                }
            }
            while request:
                answer = self._client.batch_get_item(RequestItems=request)
                for item in answer.get("Responses", {}).get(name, []):
                    found[str(item["sk"])] = _plain(item)
                request = answer.get("UnprocessedKeys") or {}
        return found

    def drop_changes(self, project: str, ids: list[str]) -> None:
        with self._table.batch_writer() as batch:
            for row_id in ids:
                batch.delete_item(Key={"pk": f"SCHG#{project}", "sk": row_id})

    # ------------------------------------------------------------------ snapshot bytes
    def local_copy(self, key: str) -> Path | None:
        """The snapshot's bytes in this function's cache directory (downloaded once per key);
        None when the object is gone (a compaction replaced it meanwhile)."""
        self._cache.mkdir(parents=True, exist_ok=True)
        file = self._cache / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".sqlite")
        if file.exists():
            return file
        got = if_found(lambda: self._s3.get_object(Bucket=self._bucket, Key=key))
        if got is None:
            return None
        partial = file.with_suffix(f".{secrets.token_hex(4)}.part")
        partial.write_bytes(got["Body"].read())
        partial.replace(file)
        for old in self._cache.glob("*.sqlite"):  # the directory keeps the newest few only
            if old != file and old.stat().st_mtime < time.time() - 3600:
                old.unlink(missing_ok=True)
        return file

    def upload(self, project: str, file: Path, watermark: str) -> str:
        key = f"search/{project}/{watermark or '0'}-{secrets.token_hex(8)}.sqlite"
        data = file.read_bytes()
        import base64

        self._s3.put_object(
            Bucket=self._bucket,
            Key=key,
            Body=data,
            ChecksumSHA256=base64.b64encode(hashlib.sha256(data).digest()).decode(),
        )
        return key

    def drop_object(self, key: str) -> None:
        self._s3.delete_object(Bucket=self._bucket, Key=key)

    # ------------------------------------------------------------------ the lease
    def lease(self, project: str, holder: str, seconds: int, now: float | None = None) -> bool:
        at = int(now if now is not None else time.time())
        return conditionally(
            lambda: self._table.put_item(
                Item={"pk": f"SLEASE#{project}", "sk": "#", "holder": holder, "until": at + seconds},
                ConditionExpression="attribute_not_exists(pk) OR #u < :now",
                ExpressionAttributeNames={"#u": "until"},
                ExpressionAttributeValues={":now": at},
            )
        )

    def release(self, project: str, holder: str) -> None:
        conditionally(
            lambda: self._table.delete_item(
                Key={"pk": f"SLEASE#{project}", "sk": "#"},
                ConditionExpression="holder = :me",
                ExpressionAttributeValues={":me": holder},
            )
        )


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    return {k: (list(v) if isinstance(v, (list, set)) else v) for k, v in item.items() if k not in ("pk", "sk")}


__all__ = ["SearchStore", "Snapshot"]
