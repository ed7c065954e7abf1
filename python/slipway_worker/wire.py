"""Python values as the wire carries them (JSON), and checkpoint blobs as opaque pairs."""

import base64
import dataclasses
import datetime
import enum
import math
import uuid
from collections.abc import Mapping
from typing import Any

# Blob types written by this worker carry this prefix, so the TypeScript side stores them
# as they are and a JS graph can tell a Python thread from its own.
BLOB_PREFIX = "py:"


def to_wire(value: Any) -> Any:
    """JSON-compatible form of a graph's value, as the vendor's Python server sends it."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): to_wire(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_wire(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # pydantic models, LangChain messages among them
        return to_wire(dump())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_wire({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, enum.Enum):
        return to_wire(value.value)
    if isinstance(value, BaseException):
        return {"error": type(value).__name__, "message": str(value)}
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    as_dict = getattr(value, "_asdict", None)
    if callable(as_dict):  # named tuples
        return to_wire(as_dict())
    return repr(value)


def dump_blob(serde: Any, value: Any) -> dict[str, str]:
    kind, data = serde.dumps_typed(value)
    return {"t": BLOB_PREFIX + kind, "b": base64.b64encode(data).decode()}


def load_blob(serde: Any, blob: Mapping[str, str]) -> Any:
    kind = blob["t"]
    if not kind.startswith(BLOB_PREFIX):
        raise ValueError(f"a checkpoint value of type {kind!r} was not written by a Python graph")
    return serde.loads_typed((kind[len(BLOB_PREFIX):], base64.b64decode(blob["b"])))
