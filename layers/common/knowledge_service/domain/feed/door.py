"""The door (the event contract's rule for a consumer): every envelope is checked before any
field of it is believed.

In order, and the first that fails names the class:

1. ``oversized`` — more than 16 KiB (16,384 bytes). An oversized envelope is never handed
   to the JSON parser: the size is measured on the bytes as they arrived.
2. ``not_json`` / ``not_an_object`` — it must parse, and parse to a JSON object.
3. ``protocol_unsupported`` — ``protocol_version`` must be one this build reads (1).
4. ``header_invalid`` — the header against the consumer's view of ``envelope.schema.json``
   (kept beside this module, with its registry version).

What fails is the sender's fault: it goes to the dead-letter table verbatim, never the inbox,
and is never retried. An envelope arrives either as its JSON text (a string the producer
forwarded as it received it) or already parsed inside the page; a parsed one is measured on
its compact serialization.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import fastjsonschema

from knowledge_service.upstream.models import FeedEnvelope

MAX_ENVELOPE_BYTES = 16 * 1024
PROTOCOL_VERSIONS = frozenset({1})
SCHEMA_PATH = Path(__file__).with_name("envelope.schema.json")

OVERSIZED = "oversized"
NOT_JSON = "not_json"
NOT_AN_OBJECT = "not_an_object"
PROTOCOL_UNSUPPORTED = "protocol_unsupported"
HEADER_INVALID = "header_invalid"
DOOR_CLASSES = (OVERSIZED, NOT_JSON, NOT_AN_OBJECT, PROTOCOL_UNSUPPORTED, HEADER_INVALID)


@dataclass(frozen=True)
class Admitted:
    envelope: FeedEnvelope
    raw: dict[str, Any]


@dataclass(frozen=True)
class Refused:
    """What the door refused: the class, why, the envelope's text verbatim, and whatever of its
    header could be read without believing it (None when nothing could)."""

    refusal: str
    reason: str
    text: str
    event_id: str | None = None
    event_type: str | None = None
    sequence: int | None = None
    record_class: str | None = None

    @property
    def stops_the_stream(self) -> bool:
        """A protocol this build cannot read stops its stream there: nothing after it is read either."""
        return self.refusal == PROTOCOL_UNSUPPORTED


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


@lru_cache(maxsize=1)
def _validator() -> Any:
    return fastjsonschema.compile(_schema())


def schema_version() -> str:
    """The consumer's schema and the registry version it was taken from, as an entry records them."""
    return f"envelope.schema.json@{_schema()['x-registry-version']}"


def registry_version() -> str:
    return str(_schema()["x-registry-version"])


def parse(item: object, *, parser: Any = json.loads) -> Admitted | Refused:
    """Check one envelope, as its text (``str``/``bytes``) or as the page parsed it (``dict``).
    ``parser`` is injectable so a test can see it is never called for an oversized envelope."""
    if isinstance(item, bytes | str):
        data = item.encode("utf-8") if isinstance(item, str) else item
        text = data.decode("utf-8", errors="replace")
        if len(data) > MAX_ENVELOPE_BYTES:
            return Refused(OVERSIZED, f"{len(data)} bytes, over the {MAX_ENVELOPE_BYTES}-byte limit", text)
        try:
            value = parser(data)
        except (ValueError, UnicodeDecodeError) as error:
            return Refused(NOT_JSON, f"not JSON: {error.__class__.__name__}", text)
    else:
        value = item
        text = json.dumps(item, separators=(",", ":"), sort_keys=True, default=str)
        size = len(text.encode("utf-8"))
        if size > MAX_ENVELOPE_BYTES:
            return Refused(OVERSIZED, f"{size} bytes, over the {MAX_ENVELOPE_BYTES}-byte limit", text)
    if not isinstance(value, dict):
        return Refused(NOT_AN_OBJECT, f"a JSON {type(value).__name__}, not an object", text)
    header = _readable_header(value)
    version = value.get("protocol_version")
    if isinstance(version, bool) or version not in PROTOCOL_VERSIONS:
        return Refused(
            PROTOCOL_UNSUPPORTED, f"protocol_version {version!r} is not one this build reads", text, **header
        )
    try:
        _validator()(value)
    except fastjsonschema.JsonSchemaValueException as error:
        return Refused(HEADER_INVALID, f"header: {error.message}", text, **header)
    return Admitted(FeedEnvelope.model_validate(value), dict(value))


def _readable_header(value: dict[str, Any]) -> dict[str, Any]:
    """The header fields that can be read as what they claim to be (nothing is believed beyond that)."""
    sequence = value.get("sequence")
    return {
        "event_id": _short_text(value.get("event_id")),
        "event_type": _short_text(value.get("event_type")),
        "sequence": sequence if isinstance(sequence, int) and not isinstance(sequence, bool) and sequence > 0 else None,
        "record_class": _short_text(value.get("record_class")),
    }


def _short_text(value: object) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= 200 else None


def header_of(raw: dict[str, Any]) -> dict[str, Any]:
    """An envelope reduced to its header (what a scrubbed entry keeps when its header was validated)."""
    return {k: v for k, v in raw.items() if k != "payload"}
