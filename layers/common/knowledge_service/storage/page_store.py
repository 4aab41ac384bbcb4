"""The page store: page heads, the write log, kept versions and the project's kb feed.

One DynamoDB table (``PAGES_TABLE``) holds, per project:

- ``PAGE#<project>`` / ``<path>``: the page's head — its version, size, last write and
  what the hub read from its bytes (frontmatter, links, per-write lint). A deleted page
  keeps its head without a ``version`` (a tombstone), so ``if_version: absent`` is one
  condition on one item and the page's verification note survives a delete and a restore;
- ``LOG#<project>`` / ``<row id>``: the write log, the whole base's, newest last;
- ``PLOG#<project>#<path>`` / ``<row id>``: the same row under the page's own history;
- ``VER#<project>`` / ``<sha256>``: a kept version (its bytes are in S3 under
  ``pages/<project>/<sha256>``, content-addressed, so identical bytes are stored once);
- ``META#<project>`` / ``#<n>`` (n < :data:`META_SHARDS`): the bytes the kept versions use
  and the write generation, in shards: a write adds one to the generation of the shard its
  row id picks (and its new bytes there), so concurrent writers of one project do not meet on
  one item; readers sum the shards (one Query, or their keys in the door's BatchGetItem). The
  sum is what invalidates the derived numbers everywhere (it grows with every write). The
  one item of earlier versions (``sk=#``) is folded into shard 0 by ``storage/migrations.py``
  (until then it is summed like a shard);
- ``FEED#<project>`` / ``<row id>``: the signals (``kb_put``, ``kb_deleted``, ...) the
  project reads back, each also put on the EventBridge bus;
- ``SROW#<project>`` / ``<path>``: the page's search row (``domain/pages/search.py``): path,
  title, type, status, tags, the first 16 KiB of the body, the version; a delete removes it;
- ``SCHG#<project>`` / ``<row id>``: which path a write changed, for the search index's overlay
  (``storage/search_store.py`` reads those after its snapshot's watermark, and drops them once
  folded into a snapshot);
- ``SESSION#<id>`` / ``#`` and ``brain#<path>``: a mission's session brain (the id is the
  mission's), each entry's bytes in S3 under ``brain/<id>/``.

A write is one transaction (head under its ``if_version`` condition, both log rows, the
feed row, the generation, the search row and its change marker), so a page is never
findable without its head nor its head without its search row, and of two writers with the
same ``if_version`` exactly one lands. Its bytes are stored first; a crash between leaves
only a version no log row names, which ``DELETE kb/versions`` sweeps.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError

from knowledge_service.errors import Busy, InternalError, PayloadTooLarge
from knowledge_service.storage.toolkit import (
    conditionally,
    if_found,
    is_condition_refusal,
    is_transaction_conflict,
    query_all,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBServiceResource

ABSENT = "absent"
BRAIN_VALUE_LIMIT = 4 * 1024 * 1024
_TRANSACT_LIMIT = 100
_BATCH_READ = 100  # BatchGetItem's most keys a request


def version_of(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def new_row_id() -> str:
    """Sortable by time (microseconds), unique by 32 random bits."""
    return f"{time.time_ns() // 1000:017d}-{secrets.token_hex(4)}"


@dataclass
class Head:
    path: str
    version: str | None
    size_bytes: int
    last_write_by: str
    last_write_at: str
    meta: dict[str, Any] = field(default_factory=dict)
    verified_version: str | None = None
    last_write_principal: str | None = None  # who wrote, by name, where ``last_write_by`` is a role word (human)

    @property
    def exists(self) -> bool:
        return self.version is not None


@dataclass
class LogRow:
    id: str
    op: str
    path: str
    actor: str
    at: str
    version: str | None
    size_bytes: int | None
    replaced: str | None = None
    restored: str | None = None
    brought: bool = False
    forgotten: bool = False
    principal: str | None = None


@dataclass
class Write:
    """One write the store lands in one transaction."""

    project: str
    path: str
    op: str
    actor: str
    signal: str
    guard: str | None  # None: last writer wins; "absent"; or a version
    version: str | None  # None: a delete
    size_bytes: int
    replaced: str | None
    meta: dict[str, Any] = field(default_factory=dict)
    brought: bool = False
    restored: str | None = None
    keep_verified_version: str | None = None
    search: dict[str, Any] | None = None  # the page's search row; None with a delete (the row goes)
    new_bytes: int = 0
    principal: str | None = None  # the writing principal's name, kept beside ``actor`` (the spec's word)
    """The size of bytes the write believes new (stored in S3 already): its transaction puts
    their version item (on condition that none exists) and adds them to the kept bytes. When
    only that condition refuses it, the write raises :class:`AlreadyKept`."""


class AlreadyKept(Exception):
    """A write's bytes were kept already (another write stored the same bytes): write again
    without their version item."""


@dataclass
class Preread:
    """What the door read of the page store with the caller (``PageStore.preread``): heads by
    path (None: no head) and (generation, kept bytes); each used once, then read afresh."""

    heads: dict[str, Head | None]
    generation: tuple[int, int] | None = None


class PageStore:
    def __init__(self, resource: DynamoDBServiceResource, table_name: str, s3: Any, bucket: str, events: Any, bus: str):
        self._table = resource.Table(table_name) if table_name else None
        self._client: Any = resource.meta.client  # the resource's client: it serializes values
        self._name = table_name
        self._s3 = s3
        self._bucket = bucket
        self._events = events
        self._bus = bus

    @property
    def table(self) -> Any:
        if self._table is None:
            raise InternalError("This function is not configured with the pages table.")
        return self._table

    # ------------------------------------------------------------------ heads
    def head(self, project: str, path: str) -> Head | None:
        item = self.table.get_item(Key={"pk": f"PAGE#{project}", "sk": path}, ConsistentRead=True).get("Item")
        return _head(item) if item else None

    def heads(self, project: str) -> list[Head]:
        """Every head of the project, tombstones included, in path order."""
        return [_head(item) for item in self._query(Key("pk").eq(f"PAGE#{project}"))]

    def current(self, project: str) -> list[tuple[str, str, int]]:
        """(path, version, size) of every page there now, in path order: the heads' keys and
        versions only (no frontmatter), so 10,000 pages read as a few small pages of a query."""
        items = query_all(
            self.table,
            KeyConditionExpression=Key("pk").eq(f"PAGE#{project}"),
            ProjectionExpression="sk, version, size_bytes",
            ConsistentRead=True,
        )
        return [(str(i["sk"]), str(i["version"]), int(i.get("size_bytes", 0))) for i in items if i.get("version")]

    def existing(self, project: str, paths: set[str]) -> set[str]:
        """Which of ``paths`` are pages there now (tombstones are not): one consistent batch
        read per hundred paths, whatever the size of the base."""
        found: set[str] = set()
        name = self.table.name
        wanted = sorted(paths)
        for start in range(0, len(wanted), _BATCH_READ):
            request: dict[str, Any] = {
                name: {
                    "Keys": [{"pk": f"PAGE#{project}", "sk": p} for p in wanted[start : start + _BATCH_READ]],
                    "ConsistentRead": True,
                    "ProjectionExpression": "sk, version",
                }
            }
            while request:
                answer = self._client.batch_get_item(RequestItems=request)
                found.update(
                    str(item["sk"]) for item in answer.get("Responses", {}).get(name, []) if item.get("version")
                )
                request = answer.get("UnprocessedKeys") or {}
        return found

    def holds_pages_under(self, project: str, directory: str) -> bool:
        """Whether some page there now lies under ``directory``: a key-range read that stops at
        the first one (tombstones skipped)."""
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(f"PAGE#{project}") & Key("sk").begins_with(f"{directory}/"),
            "FilterExpression": Attr("version").exists(),
            "ProjectionExpression": "sk",
            "ConsistentRead": True,
            "Limit": _BATCH_READ,
        }
        while True:
            page = self.table.query(**kwargs)
            if page.get("Items"):
                return True
            if "LastEvaluatedKey" not in page:
                return False
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def generation(self, project: str) -> tuple[int, int]:
        """(write generation, bytes the kept versions use): the shards summed, one Query."""
        return generation_of(self._query(Key("pk").eq(f"META#{project}")))

    # ------------------------------------------------------------------ what the door reads with the caller
    def door_keys(self, project: str, path: str | None, *, meta: bool) -> dict[str, list[dict[str, Any]]]:
        """The keys a route reads in the door's one BatchGetItem (``storage/admission``): the
        head of ``path`` and, with ``meta``, the project's generation and kept bytes."""
        keys = [{"pk": f"PAGE#{project}", "sk": path}] if path is not None else []
        if meta:
            keys += meta_keys(project)
        return {self.table.name: keys} if keys else {}

    def preread(self, project: str, path: str | None, items: dict[str, list[dict[str, Any]]], *, meta: bool) -> Preread:
        """What the door's read found for :meth:`door_keys`, for the route to use once."""
        found = items.get(self.table.name, [])
        heads: dict[str, Head | None] = {}
        if path is not None:
            item = next((i for i in found if i["pk"] == f"PAGE#{project}" and i["sk"] == path), None)
            heads[path] = _head(item) if item else None
        metas = [i for i in found if str(i["pk"]).startswith("META#")]
        return Preread(heads, generation_of(metas) if meta else None)

    # ------------------------------------------------------------------ versions (bytes)
    def _key(self, project: str, version: str) -> str:
        return f"pages/{project}/{version.removeprefix('sha256:')}"

    def is_kept(self, project: str, version: str) -> bool:
        return "Item" in self.table.get_item(Key={"pk": f"VER#{project}", "sk": version}, ConsistentRead=True)

    def keep(self, project: str, content: bytes, kept: bool | None = None) -> tuple[str, bool]:
        """Store ``content`` once (content-addressed); (version, whether it was new). ``kept`` is
        what the caller already read of ``is_kept`` (not read again); a writer that kept the same
        bytes meanwhile is met by the conditional put. (A page write lands its version item in
        its own transaction instead: :attr:`Write.new_bytes`.)"""
        version = version_of(content)
        if kept if kept is not None else self.is_kept(project, version):
            return version, False
        self.put_bytes(project, content)
        items = [
            _version_put(self._name, project, version, len(content)),
            {
                "Update": {
                    "TableName": self._name,
                    "Key": _ddb(meta_key(project, version)),
                    "UpdateExpression": "ADD used_bytes :n",
                    "ExpressionAttributeValues": _ddb({":n": len(content)}),
                }
            },
        ]
        return version, self._transact(items)

    def _transact(self, items: list[dict[str, Any]]) -> bool:
        """One transaction: True when it landed, False when a condition refused it; a conflict with
        another request on one of its items (each write adds to ``META#``) landed nothing: 503."""
        try:
            return conditionally(
                lambda: self._client.transact_write_items(TransactItems=items), refused=is_condition_refusal
            )
        except ClientError as error:
            if is_transaction_conflict(error):
                raise Busy(
                    "Another write to this base was landing; try again.", headers={"Retry-After": "1"}
                ) from error
            raise

    def put_bytes(self, project: str, content: bytes) -> str:
        """Store ``content``'s bytes in S3 under their digest (idempotent); its version."""
        version = version_of(content)
        self._s3.put_object(
            Bucket=self._bucket,
            Key=self._key(project, version),
            Body=content,
            ChecksumSHA256=_b64(hashlib.sha256(content).digest()),
        )
        return version

    def read_bytes(self, project: str, version: str) -> bytes | None:
        got = if_found(lambda: self._s3.get_object(Bucket=self._bucket, Key=self._key(project, version)))
        return None if got is None else bytes(got["Body"].read())

    def kept_versions(self, project: str) -> dict[str, int]:
        return {str(i["sk"]): int(i["size_bytes"]) for i in self._query(Key("pk").eq(f"VER#{project}"))}

    def forget_version(self, project: str, version: str, size: int) -> None:
        self._client.transact_write_items(
            TransactItems=[
                {"Delete": {"TableName": self._name, "Key": _ddb({"pk": f"VER#{project}", "sk": version})}},
                {
                    "Update": {
                        "TableName": self._name,
                        "Key": _ddb(meta_key(project, version)),
                        "UpdateExpression": "ADD used_bytes :n, gen :one",
                        "ExpressionAttributeValues": _ddb({":n": -size, ":one": 1}),
                    }
                },
            ]
        )
        self._s3.delete_object(Bucket=self._bucket, Key=self._key(project, version))

    # ------------------------------------------------------------------ the write
    def write(self, write: Write) -> LogRow | None:
        """Land ``write`` in one transaction; None when its ``if_version`` guard refused it."""
        if write.version is not None and write.search is None:
            raise InternalError("A page write carries its search row (the one write path lands it with the head).")
        at = iso(_now())
        row = LogRow(
            new_row_id(),
            write.op,
            write.path,
            write.actor,
            at,
            write.version,
            write.size_bytes if write.version else None,
            write.replaced,
            write.restored,
            write.brought,
            principal=write.principal,
        )
        feed = {
            "pk": f"FEED#{write.project}",
            "sk": row.id,
            "signal": write.signal,
            "path": write.path,
            "actor": write.actor,
            "at": at,
            "version": write.version,
        }
        items = [
            {"Put": _head_put(self._name, write, at)},
            {"Put": {"TableName": self._name, "Item": _ddb(_row_item(f"LOG#{write.project}", row))}},
            {"Put": {"TableName": self._name, "Item": _ddb(_row_item(f"PLOG#{write.project}#{write.path}", row))}},
            {"Put": {"TableName": self._name, "Item": _ddb(feed)}},
            {"Update": _generation_update(self._name, write.project, row.id, write.new_bytes)},
            *search_items(self._name, write.project, write.path, row.id, write.search),
        ]
        if write.new_bytes and write.version is not None:
            items.append(_version_put(self._name, write.project, write.version, write.new_bytes))
        if not self._land(write, items):
            return None
        self._signal(write.project, feed)
        return row

    def _land(self, write: Write, items: list[dict[str, Any]]) -> bool:
        """Run the write's transaction: False when a condition refused it (its guard). Raises Busy
        when another write held one of its items, and :class:`AlreadyKept` when only its version
        item's condition refused it."""
        try:
            self._client.transact_write_items(TransactItems=items)
        except ClientError as error:
            if is_transaction_conflict(error):  # another write held one of its items: nothing landed
                raise Busy(
                    "Another write to this base was landing; try again.", headers={"Retry-After": "1"}
                ) from error
            if not is_condition_refusal(error):
                raise
            reasons = error.response.get("CancellationReasons") or []  # type: ignore[typeddict-item]
            refused = [i for i, r in enumerate(reasons) if r.get("Code") == "ConditionalCheckFailed"]
            if write.new_bytes and refused == [len(items) - 1]:
                raise AlreadyKept(write.version) from error  # only the version item's condition refused
            return False
        return True

    def _signal(self, project: str, feed: dict[str, Any]) -> None:
        if not self._bus:
            return
        self._events.put_events(
            Entries=[
                {
                    "Source": "knowledge-service.pages",
                    "DetailType": str(feed["signal"]),
                    "EventBusName": self._bus,
                    "Detail": json.dumps(
                        {"project": project, **{k: v for k, v in feed.items() if k not in ("pk", "sk")}}
                    ),
                }
            ]
        )

    # ------------------------------------------------------------------ the log
    def log(self, project: str, path: str | None = None) -> list[LogRow]:
        """The write log (the whole base's, or one page's), newest first: all of it."""
        pk = f"PLOG#{project}#{path}" if path is not None else f"LOG#{project}"
        return [_row(i) for i in self._query(Key("pk").eq(pk), forward=False)]

    def mark_forgotten(self, project: str, rows: list[LogRow]) -> None:
        """Mark rows ``forgotten`` under both keys, in transactions of at most 100 updates."""
        updates = []
        for row in rows:
            for pk in (f"LOG#{project}", f"PLOG#{project}#{row.path}"):
                updates.append(
                    {
                        "Update": {
                            "TableName": self._name,
                            "Key": _ddb({"pk": pk, "sk": row.id}),
                            "UpdateExpression": "SET forgotten = :yes",
                            "ExpressionAttributeValues": _ddb({":yes": True}),
                        }
                    }
                )
        for start in range(0, len(updates), _TRANSACT_LIMIT):
            self._client.transact_write_items(TransactItems=updates[start : start + _TRANSACT_LIMIT])

    def feed(self, project: str) -> list[dict[str, Any]]:
        """The project's kb signals, oldest first."""
        return [
            {k: _plain(v) for k, v in item.items() if k not in ("pk", "sk")} | {"id": item["sk"]}
            for item in self._query(Key("pk").eq(f"FEED#{project}"))
        ]

    # ------------------------------------------------------------------ the session brain
    def create_session(self, session_id: str, project: str, name: str, expires_at: datetime | None = None) -> None:
        """A session brain for one mission: it lives until ``expires_at`` (the mission's) or until
        :meth:`end_session`, whichever is first, and DynamoDB removes it after (the table's TTL)."""
        lifetime = {} if expires_at is None else {"expires_at": expires_at.isoformat(), **_expiry(expires_at)}
        self.table.put_item(
            Item={"pk": f"SESSION#{session_id}", "sk": "#", "project": project, "name": name, **lifetime}
        )

    def end_session(self, session_id: str, at: datetime | None = None) -> None:
        """The mission ended: its session brain is gone from now on (its items wait for the TTL)."""
        conditionally(
            lambda: self.table.update_item(
                Key={"pk": f"SESSION#{session_id}", "sk": "#"},
                UpdateExpression="SET ended_at = if_not_exists(ended_at, :at)",
                ConditionExpression=Attr("pk").exists(),
                ExpressionAttributeValues={":at": (at or datetime.now(UTC)).isoformat()},
            )
        )

    def session(self, session_id: str, now: datetime | None = None) -> dict[str, str] | None:
        """The live session's project and name; None for one unknown, ended or expired."""
        item = self.table.get_item(Key={"pk": f"SESSION#{session_id}", "sk": "#"}, ConsistentRead=True).get("Item")
        if not item or "ended_at" in item:
            return None
        if "expires_at" in item and datetime.fromisoformat(str(item["expires_at"])) <= (now or datetime.now(UTC)):
            return None
        return {"project": str(item["project"]), "name": str(item["name"])}

    def brain_put(self, session_id: str, path: str, value: bytes, expires_at: datetime | None = None) -> None:
        """One session brain value (at most 4 MiB: the brain's own limit, not the page's).

        Each write's bytes get an object of their own (``brain/<session>/<random>``), named by
        the entry, so an overwrite or a delete removes exactly the bytes it replaced and two
        writers never share an object one of them deletes."""
        if len(value) > BRAIN_VALUE_LIMIT:
            raise PayloadTooLarge(f"A session brain value holds at most {BRAIN_VALUE_LIMIT} bytes (4 MiB).")
        key = f"brain/{session_id}/{secrets.token_hex(16)}"
        self._s3.put_object(Bucket=self._bucket, Key=key, Body=value)
        old = self.table.put_item(
            Item={
                "pk": f"SESSION#{session_id}",
                "sk": f"brain#{path}",
                "sha256": hashlib.sha256(value).hexdigest(),
                "size_bytes": len(value),
                "written_at": datetime.now(UTC).isoformat(),
                "key": key,
                **({} if expires_at is None else _expiry(expires_at)),
            },
            ReturnValues="ALL_OLD",
        ).get("Attributes")
        if old and "key" in old:
            self._s3.delete_object(Bucket=self._bucket, Key=str(old["key"]))

    def brain_get(self, session_id: str, path: str) -> bytes | None:
        item = self.table.get_item(Key={"pk": f"SESSION#{session_id}", "sk": f"brain#{path}"}, ConsistentRead=True)
        if "Item" not in item:
            return None
        got = self._s3.get_object(Bucket=self._bucket, Key=_brain_key(session_id, item["Item"]))
        return bytes(got["Body"].read())

    def brain_list(
        self, session_id: str, directory: str, after: str | None, limit: int
    ) -> tuple[list[BrainEntry], bool]:
        """The entries under ``directory`` in path order, strictly after ``after``, at most
        ``limit`` of them, and whether more follow: one bounded query, never the whole brain."""
        under = f"brain#{directory.rstrip('/')}/"
        query: dict[str, Any] = {
            "KeyConditionExpression": Key("pk").eq(f"SESSION#{session_id}") & Key("sk").begins_with(under),
            "ConsistentRead": True,
            "Limit": limit + 1,
        }
        if after is not None and f"brain#{after}".startswith(under):
            query["ExclusiveStartKey"] = {"pk": f"SESSION#{session_id}", "sk": f"brain#{after}"}
        elif after is not None and f"brain#{after}" > under:
            return [], False  # past every entry under the directory (a start key outside it is refused)
        entries: list[BrainEntry] = []
        while len(entries) <= limit:
            answer = self.table.query(**query)
            entries += [
                BrainEntry(str(i["sk"]).removeprefix("brain#"), int(i["size_bytes"]), str(i.get("written_at") or ""))
                for i in answer.get("Items", [])
            ]
            if "LastEvaluatedKey" not in answer:
                break
            query["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
        return entries[:limit], len(entries) > limit

    def brain_delete(self, session_id: str, path: str) -> bool:
        """Remove one entry and its bytes; False when there was none."""
        old = self.table.delete_item(
            Key={"pk": f"SESSION#{session_id}", "sk": f"brain#{path}"}, ReturnValues="ALL_OLD"
        ).get("Attributes")
        if not old:
            return False
        if "key" in old:  # an entry written before entries had objects of their own keeps its bytes
            self._s3.delete_object(Bucket=self._bucket, Key=str(old["key"]))
        return True

    # ------------------------------------------------------------------ helpers
    def _query(self, condition: Any, forward: bool = True) -> list[dict[str, Any]]:
        return query_all(self.table, KeyConditionExpression=condition, ScanIndexForward=forward, ConsistentRead=True)


META_SHARDS = 8
"""How many items a project's write generation and kept bytes are spread over."""
LEGACY_META_SK = "#"
"""The one meta item of a project before issue 30 (folded into shard 0 by the migration)."""


def meta_key(project: str, spread_by: str) -> dict[str, str]:
    """The meta shard a write picks: by the SHA-256 of ``spread_by`` (its row id, or a version)."""
    shard = int.from_bytes(hashlib.sha256(spread_by.encode()).digest()[:4], "big") % META_SHARDS
    return {"pk": f"META#{project}", "sk": f"#{shard}"}


def meta_keys(project: str) -> list[dict[str, str]]:
    """Every meta item of the project (the legacy one too, summed until it is migrated)."""
    return [{"pk": f"META#{project}", "sk": f"#{n}"} for n in range(META_SHARDS)] + [
        {"pk": f"META#{project}", "sk": LEGACY_META_SK}
    ]


def generation_of(items: list[dict[str, Any]]) -> tuple[int, int]:
    """(write generation, kept bytes) summed over the meta items read."""
    return sum(int(i.get("gen", 0)) for i in items), sum(int(i.get("used_bytes", 0)) for i in items)


def _head_put(table: str, write: Write, at: str) -> dict[str, Any]:
    """The write's put of the page's head, on condition that the head is still what it read."""
    head: dict[str, Any] = {
        "pk": f"PAGE#{write.project}",
        "sk": write.path,
        "size_bytes": write.size_bytes if write.version else 0,
        "last_write_by": write.actor,
        "last_write_at": at,
        "last_write_principal": write.principal,
        "meta": json.dumps(write.meta, separators=(",", ":")),
    }
    if write.version:
        head["version"] = write.version
    verified_version = write.version if write.brought else write.keep_verified_version
    if verified_version:
        head["verified_version"] = verified_version
    put_head: dict[str, Any] = {"TableName": table, "Item": _ddb(head)}
    # An unguarded write still lands only on what it read (so its log row names what it
    # replaced); the service reads again and retries, and the last writer wins.
    guard = write.guard if write.guard is not None else (write.replaced or ABSENT)
    if guard == ABSENT:
        put_head["ConditionExpression"] = "attribute_not_exists(version)"
    else:
        put_head["ConditionExpression"] = "version = :guard"
        put_head["ExpressionAttributeValues"] = _ddb({":guard": guard})
    return put_head


def _generation_update(table: str, project: str, row_id: str, new_bytes: int) -> dict[str, Any]:
    """The write's update of the base's meta item: one more write generation, and the new bytes kept."""
    return {
        "TableName": table,
        "Key": _ddb(meta_key(project, row_id)),
        "UpdateExpression": "ADD gen :one, used_bytes :n" if new_bytes else "ADD gen :one",
        "ExpressionAttributeValues": _ddb({":one": 1, ":n": new_bytes} if new_bytes else {":one": 1}),
    }


def _version_put(table: str, project: str, version: str, size: int) -> dict[str, Any]:
    return {
        "Put": {
            "TableName": table,
            "Item": _ddb({"pk": f"VER#{project}", "sk": version, "size_bytes": size}),
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }


def search_items(table: str, project: str, path: str, row_id: str, row: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The two items a write adds to its transaction for search: the page's search row (put, or
    deleted with the page) and the change marker the index's overlay reads."""
    key = {"pk": f"SROW#{project}", "sk": path}
    change: dict[str, Any] = {
        "Put": {"TableName": table, "Item": {"pk": f"SCHG#{project}", "sk": row_id, "path": path}}
    }
    if row is None:
        return [{"Delete": {"TableName": table, "Key": key}}, change]
    return [{"Put": {"TableName": table, "Item": _ddb({**key, **row})}}, change]


@dataclass(frozen=True)
class BrainEntry:
    """One session brain entry as a listing shows it (its bytes are read by path)."""

    path: str
    size_bytes: int
    written_at: str


BRAIN_EXPIRY_ATTRIBUTE = "expire_at_epoch"
"""The pages table's TTL attribute (``template.yaml``), carried only by session brain items:
epoch seconds of the mission's expiry, after which DynamoDB removes them."""


def _expiry(expires_at: datetime) -> dict[str, int]:
    return {BRAIN_EXPIRY_ATTRIBUTE: int(expires_at.timestamp())}


def _brain_key(session_id: str, item: dict[str, Any]) -> str:
    """Where an entry's bytes are: its own object, or (written before that) its digest's."""
    return str(item.get("key") or f"brain/{session_id}/{item['sha256']}")


def _b64(raw: bytes) -> str:
    import base64

    return base64.b64encode(raw).decode()


def _plain(value: Any) -> Any:
    from decimal import Decimal

    if isinstance(value, Decimal):
        return int(value)
    return value


def _ddb(item: dict[str, Any]) -> dict[str, Any]:
    """An item for the resource's client (which serializes Python values itself), without nulls."""
    return {k: v for k, v in item.items() if v is not None}


def _head(item: dict[str, Any]) -> Head:
    return Head(
        path=str(item["sk"]),
        version=str(item["version"]) if item.get("version") else None,
        size_bytes=int(item.get("size_bytes", 0)),
        last_write_by=str(item.get("last_write_by", "")),
        last_write_at=str(item.get("last_write_at", "")),
        meta=json.loads(str(item.get("meta") or "{}")),
        verified_version=str(item["verified_version"]) if item.get("verified_version") else None,
        last_write_principal=str(item["last_write_principal"]) if item.get("last_write_principal") else None,
    )


def _row_item(pk: str, row: LogRow) -> dict[str, Any]:
    return {
        "pk": pk,
        "sk": row.id,
        "op": row.op,
        "path": row.path,
        "actor": row.actor,
        "at": row.at,
        "version": row.version,
        "size_bytes": row.size_bytes,
        "replaced": row.replaced,
        "restored": row.restored,
        "brought": row.brought,
        "principal": row.principal,
    }


def _row(item: dict[str, Any]) -> LogRow:
    return LogRow(
        id=str(item["sk"]),
        op=str(item["op"]),
        path=str(item["path"]),
        actor=str(item["actor"]),
        at=str(item["at"]),
        version=str(item["version"]) if item.get("version") else None,
        size_bytes=int(item["size_bytes"]) if item.get("size_bytes") is not None else None,
        replaced=str(item["replaced"]) if item.get("replaced") else None,
        restored=str(item["restored"]) if item.get("restored") else None,
        brought=bool(item.get("brought", False)),
        forgotten=bool(item.get("forgotten", False)),
        principal=str(item["principal"]) if item.get("principal") else None,
    )


__all__ = ["ABSENT", "AlreadyKept", "Attr", "Head", "LogRow", "PageStore", "Preread", "Write", "iso", "version_of"]
