"""The local stack's AWS state on disk, so data survives a restart and a ``kill -9``.

``take_snapshot`` reads everything the emulator holds that the service writes: every
DynamoDB table (Scan, every page, through the low-level client so the items keep their
DynamoDB types), every SSM parameter (decrypted, type kept) and every S3 object
(base64). ``write_snapshot`` stores it atomically (a temporary file, then a rename), mode
0600 (it holds the FORAGER credential and the token hashes). ``restore_snapshot`` puts it
back into a fresh emulator after the template's resources exist; a table or bucket the
template no longer declares is recreated from the snapshot's own description of it.

``Journal`` is what happened since: one record per write the emulator answered (appended and
flushed before the answer leaves, ``devstack.aws.JournalingApp``), each record the
*after-images* of what the write touched (an item, an object or a parameter as the emulator
then held it, or that it is gone). After-images are idempotent, so a snapshot taken while
writes go on (it may already hold some of the journal's writes) plus the journal replayed
over it is the state of the last record. ``replay_journal`` puts the journal back after
``restore_snapshot``. Each record is framed by its length and a CRC-32: a torn last record
(the kill landed mid-append) fails the check and is dropped — it was never acknowledged.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import os
import struct
import tempfile
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

log = logging.getLogger("devstack.persistence")

FORMAT_VERSION = 1
_BATCH = 25


ObjectCache = dict[tuple[str, str], tuple[str, dict[str, Any]]]
"""(bucket, key) -> (ETag, the object's record): an unchanged object is not downloaded again."""


def take_snapshot(dynamodb: Any, ssm: Any, s3: Any, object_cache: ObjectCache | None = None) -> dict[str, Any]:
    return {
        "version": FORMAT_VERSION,
        "dynamodb": _tables(dynamodb),
        "ssm": _parameters(ssm),
        "s3": _buckets(s3, {} if object_cache is None else object_cache),
    }


def _tables(dynamodb: Any) -> dict[str, Any]:
    tables: dict[str, Any] = {}
    for page in dynamodb.get_paginator("list_tables").paginate():
        for name in page.get("TableNames", []):
            description = dynamodb.describe_table(TableName=name)["Table"]
            items: list[dict[str, Any]] = []
            for scan in dynamodb.get_paginator("scan").paginate(TableName=name, ConsistentRead=True):
                items.extend(scan.get("Items", []))
            items.sort(key=lambda item: json.dumps(_key_of(item, description), sort_keys=True))
            tables[name] = {"schema": _schema(description), "items": items}
    return tables


def _key_of(item: dict[str, Any], description: dict[str, Any]) -> dict[str, Any]:
    return {k["AttributeName"]: item.get(k["AttributeName"]) for k in description["KeySchema"]}


def _schema(description: dict[str, Any]) -> dict[str, Any]:
    """Enough of DescribeTable to create the table again."""
    schema: dict[str, Any] = {
        "AttributeDefinitions": description["AttributeDefinitions"],
        "KeySchema": description["KeySchema"],
    }
    indexes = [
        {"IndexName": i["IndexName"], "KeySchema": i["KeySchema"], "Projection": i["Projection"]}
        for i in description.get("GlobalSecondaryIndexes", [])
    ]
    if indexes:
        schema["GlobalSecondaryIndexes"] = indexes
    local = [
        {"IndexName": i["IndexName"], "KeySchema": i["KeySchema"], "Projection": i["Projection"]}
        for i in description.get("LocalSecondaryIndexes", [])
    ]
    if local:
        schema["LocalSecondaryIndexes"] = local
    return schema


def _parameters(ssm: Any) -> list[dict[str, Any]]:
    names: list[str] = []
    for page in ssm.get_paginator("describe_parameters").paginate():
        names.extend(p["Name"] for p in page.get("Parameters", []) if not p["Name"].startswith("/aws/"))
    parameters: list[dict[str, Any]] = []
    for start in range(0, len(names), 10):
        answer = ssm.get_parameters(Names=names[start : start + 10], WithDecryption=True)
        for p in answer.get("Parameters", []):
            parameters.append({"Name": p["Name"], "Type": p["Type"], "Value": p["Value"]})
    return sorted(parameters, key=lambda p: p["Name"])


def _buckets(s3: Any, cache: ObjectCache) -> dict[str, list[dict[str, Any]]]:
    buckets: dict[str, list[dict[str, Any]]] = {}
    seen: set[tuple[str, str]] = set()
    for bucket in s3.list_buckets().get("Buckets", []):
        name = bucket["Name"]
        objects: list[dict[str, Any]] = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=name):
            for entry in page.get("Contents", []):
                key = (name, entry["Key"])
                seen.add(key)
                cached = cache.get(key)
                if cached is None or cached[0] != entry["ETag"]:
                    cached = (entry["ETag"], _object_record(s3, name, entry["Key"]))
                    cache[key] = cached
                objects.append(cached[1])
        buckets[name] = objects
    for gone in set(cache) - seen:
        del cache[gone]
    return buckets


def _object_record(s3: Any, bucket: str, key: str) -> dict[str, Any]:
    got = s3.get_object(Bucket=bucket, Key=key)
    record: dict[str, Any] = {"Key": key, "Body": base64.b64encode(got["Body"].read()).decode("ascii")}
    if got.get("ContentType"):
        record["ContentType"] = got["ContentType"]
    if got.get("Metadata"):
        record["Metadata"] = got["Metadata"]
    return record


def restore_snapshot(snapshot: dict[str, Any], dynamodb: Any, ssm: Any, s3: Any) -> dict[str, int]:
    """Put ``snapshot`` back; counts of what was written."""
    counts = {"items": 0, "parameters": 0, "objects": 0}
    existing = set()
    for page in dynamodb.get_paginator("list_tables").paginate():
        existing.update(page.get("TableNames", []))
    for name, table in snapshot.get("dynamodb", {}).items():
        if name not in existing:
            dynamodb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", **table["schema"])
        items = table.get("items", [])
        for start in range(0, len(items), _BATCH):
            _batch_write(dynamodb, name, items[start : start + _BATCH])
        counts["items"] += len(items)
    for parameter in snapshot.get("ssm", []):
        ssm.put_parameter(Name=parameter["Name"], Value=parameter["Value"], Type=parameter["Type"], Overwrite=True)
        counts["parameters"] += 1
    buckets = {b["Name"] for b in s3.list_buckets().get("Buckets", [])}
    for bucket, objects in snapshot.get("s3", {}).items():
        if bucket not in buckets:
            s3.create_bucket(Bucket=bucket)
        for record in objects:
            kwargs: dict[str, Any] = {"Bucket": bucket, "Key": record["Key"], "Body": base64.b64decode(record["Body"])}
            if record.get("ContentType"):
                kwargs["ContentType"] = record["ContentType"]
            if record.get("Metadata"):
                kwargs["Metadata"] = record["Metadata"]
            s3.put_object(**kwargs)
            counts["objects"] += 1
    return counts


def _batch_write(dynamodb: Any, table: str, items: list[dict[str, Any]]) -> None:
    _batch_requests(dynamodb, table, [{"PutRequest": {"Item": item}} for item in items])


def _batch_requests(dynamodb: Any, table: str, requests: list[dict[str, Any]]) -> None:
    """One BatchWriteItem of puts and deletes (at most 25, each key once), retried until all are in."""
    request: dict[str, Any] = {table: requests}
    for _ in range(10):
        answer = dynamodb.batch_write_item(RequestItems=request)
        request = answer.get("UnprocessedItems") or {}
        if not request:
            return
    for item in request.get(table, []):  # the emulator kept refusing a batch: one by one
        if "PutRequest" in item:
            dynamodb.put_item(TableName=table, Item=item["PutRequest"]["Item"])
        else:
            dynamodb.delete_item(TableName=table, Key=item["DeleteRequest"]["Key"])


def read_snapshot(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("version") != FORMAT_VERSION:
        raise ValueError(f"{path} is snapshot format {data.get('version')!r}; this stack reads {FORMAT_VERSION}")
    return dict(data)


def write_snapshot(path: Path, snapshot: dict[str, Any]) -> None:
    """Write ``snapshot`` to ``path`` atomically (temporary file + rename), mode 0600."""
    document = {**snapshot, "saved_at": datetime.now(UTC).isoformat()}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def fingerprint(snapshot: dict[str, Any]) -> str:
    """A stable digest of a snapshot's content (``saved_at`` aside): skip writes that change nothing."""
    content = {k: v for k, v in snapshot.items() if k != "saved_at"}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------- the journal
JOURNAL_PREFIX = "aws-journal-"
JOURNAL_SUFFIX = ".log"
JOURNAL_RECORDS = 5000
"""A snapshot follows once the journal holds this many records (it bounds the replay at start)..."""
JOURNAL_BYTES = 64 * 1024 * 1024
"""... or this many bytes (an S3 object's after-image is its bytes)."""

_FRAME = struct.Struct(">II")  # payload length, CRC-32 of the payload
_HEADER = struct.Struct(">I")  # inside the payload: the JSON header's length, then the blobs


@dataclass
class Change:
    """One after-image: ``kind`` is ``item``, ``object`` or ``parameter``; ``value`` None means gone.

    ``item``: ``where`` = (table, the key as canonical JSON), ``value`` = the item (DynamoDB JSON).
    ``object``: ``where`` = (bucket, key), ``value`` = {ContentType?, Metadata?}, ``body`` its bytes.
    ``parameter``: ``where`` = (name,), ``value`` = {Name, Type, Value}.
    """

    kind: str
    where: tuple[str, ...]
    value: dict[str, Any] | None
    body: bytes = b""


def encode_record(changes: list[Change]) -> bytes:
    """One framed record: length, CRC-32, then a JSON header and the objects' bytes after it."""
    header = json.dumps(
        [[c.kind, list(c.where), c.value, len(c.body)] for c in changes], separators=(",", ":"), sort_keys=True
    ).encode("utf-8")
    payload = b"".join([_HEADER.pack(len(header)), header, *(c.body for c in changes)])
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def read_journal(path: Path) -> Iterator[list[Change]]:
    """The records of one journal file, in order, up to the first torn or damaged one (dropped)."""
    with path.open("rb") as handle:
        while True:
            frame = handle.read(_FRAME.size)
            if not frame:
                return
            if len(frame) < _FRAME.size:
                log.warning("%s: a torn last record (%d bytes of its frame) dropped", path.name, len(frame))
                return
            length, crc = _FRAME.unpack(frame)
            payload = handle.read(length)
            if len(payload) < length or zlib.crc32(payload) != crc:
                log.warning("%s: a torn or damaged record at byte %d dropped", path.name, handle.tell() - len(payload))
                return
            yield _decode(payload)


def _decode(payload: bytes) -> list[Change]:
    (size,) = _HEADER.unpack_from(payload)
    offset = _HEADER.size + size
    changes = []
    for kind, where, value, length in json.loads(payload[_HEADER.size : offset]):
        changes.append(Change(kind, tuple(where), value, payload[offset : offset + length]))
        offset += length
    return changes


def journal_files(state_dir: Path) -> dict[int, Path]:
    """The journal files in ``state_dir`` by generation."""
    files = {}
    for path in state_dir.glob(f"{JOURNAL_PREFIX}*{JOURNAL_SUFFIX}"):
        number = path.name[len(JOURNAL_PREFIX) : -len(JOURNAL_SUFFIX)]
        if number.isdigit():
            files[int(number)] = path
    return files


@dataclass
class Journal:
    """The append-only files of after-images in ``state_dir``, one generation at a time.

    ``lock`` is held around a write's apply, its after-images and its append (by
    ``devstack.aws.JournalingApp``), so records are in the order the emulator applied the
    writes, and ``rotate`` (under the same lock) splits them exactly: every write before the
    rotation is in an older file, every write after it in the new one.
    """

    state_dir: Path
    generation: int
    records_limit: int = JOURNAL_RECORDS
    bytes_limit: int = JOURNAL_BYTES
    lock: threading.Lock = field(default_factory=threading.Lock)
    full: threading.Event = field(default_factory=threading.Event)
    """Set once the current file passes a limit: time for a snapshot."""
    records: int = 0
    size: int = 0
    _handle: BinaryIO | None = None

    def path(self, generation: int) -> Path:
        return self.state_dir / f"{JOURNAL_PREFIX}{generation:08d}{JOURNAL_SUFFIX}"

    def append_locked(self, changes: list[Change]) -> None:
        """Append one record and flush it to the OS (the caller holds ``lock``).

        Flushed, not fsynced: a ``kill -9`` cannot lose what the kernel holds; a power cut can."""
        if not changes:
            return
        if self._handle is None:
            fd = os.open(self.path(self.generation), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._handle = os.fdopen(fd, "ab")
        data = encode_record(changes)
        self._handle.write(data)
        self._handle.flush()
        self.records += 1
        self.size += len(data)
        if self.records >= self.records_limit or self.size >= self.bytes_limit:
            self.full.set()

    def rotate(self) -> int:
        """Start a new file when the current one holds records; the generation a snapshot taken
        from now on covers up to (replay starts at that file)."""
        with self.lock:
            if self.records:
                self._close()
                self.generation += 1
                self.records = self.size = 0
            self.full.clear()
            return self.generation

    def drop_before(self, generation: int) -> None:
        """Delete the files a written snapshot holds (every generation below ``generation``)."""
        for number, path in journal_files(self.state_dir).items():
            if number < generation:
                path.unlink(missing_ok=True)

    def close(self) -> None:
        with self.lock:
            self._close()

    def _close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def replay_journal(files: list[Path], dynamodb: Any, ssm: Any, s3: Any) -> dict[str, int]:
    """Put the after-images of ``files`` (in order) back over a restored snapshot; counts.

    Only the last after-image of each item, object and parameter matters (each is the whole
    of it), so they are coalesced first and the items written 25 to a batch."""
    last: dict[tuple[str, tuple[str, ...]], Change] = {}
    records = 0
    for path in files:
        for record in read_journal(path):
            records += 1
            for change in record:
                last[(change.kind, change.where)] = change
    counts = {"records": records, "items": 0, "objects": 0, "parameters": 0}
    writes: dict[str, list[dict[str, Any]]] = {}
    for change in last.values():
        counts[f"{change.kind}s"] += 1
        if change.kind == "item":
            table, key = change.where
            put = {"PutRequest": {"Item": change.value}}
            writes.setdefault(table, []).append(put if change.value else {"DeleteRequest": {"Key": json.loads(key)}})
        elif change.kind == "object":
            _replay_object(s3, change)
        else:
            _replay_parameter(ssm, change)
    for table, requests in writes.items():
        for start in range(0, len(requests), _BATCH):
            _batch_requests(dynamodb, table, requests[start : start + _BATCH])
    return counts


def _replay_object(s3: Any, change: Change) -> None:
    bucket, key = change.where
    if change.value is None:
        s3.delete_object(Bucket=bucket, Key=key)
        return
    kwargs: dict[str, Any] = {"Bucket": bucket, "Key": key, "Body": change.body}
    if change.value.get("ContentType"):
        kwargs["ContentType"] = change.value["ContentType"]
    if change.value.get("Metadata"):
        kwargs["Metadata"] = change.value["Metadata"]
    s3.put_object(**kwargs)


def _replay_parameter(ssm: Any, change: Change) -> None:
    if change.value is None:
        with contextlib.suppress(ssm.exceptions.ParameterNotFound):
            ssm.delete_parameter(Name=change.where[0])
        return
    ssm.put_parameter(Name=change.value["Name"], Value=change.value["Value"], Type=change.value["Type"], Overwrite=True)
