"""The local stack's AWS state in one file, so data survives a restart.

``take_snapshot`` reads everything the emulator holds that the service writes: every
DynamoDB table (Scan, every page, through the low-level client so the items keep their
DynamoDB types), every SSM parameter (decrypted, type kept) and every S3 object
(base64). ``write_snapshot`` stores it atomically (a temporary file, then a rename), mode
0600 (it holds the FORAGER credential and the token hashes). ``restore_snapshot`` puts it
back into a fresh emulator after the template's resources exist; a table or bucket the
template no longer declares is recreated from the snapshot's own description of it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
    request: dict[str, Any] = {table: [{"PutRequest": {"Item": item}} for item in items]}
    for _ in range(10):
        answer = dynamodb.batch_write_item(RequestItems=request)
        request = answer.get("UnprocessedItems") or {}
        if not request:
            return
    for item in request.get(table, []):  # the emulator kept refusing a batch: one by one
        dynamodb.put_item(TableName=table, Item=item["PutRequest"]["Item"])


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
