"""The store a Python graph sees (`store` in a node): the server's store, over callbacks."""

import datetime
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, ListNamespacesOp, Op, PutOp, Result, SearchItem, SearchOp

from .wire import to_wire

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


def _op(op: Op) -> dict[str, Any]:
    if isinstance(op, GetOp):
        return {"kind": "get", "namespace": list(op.namespace), "key": op.key}
    if isinstance(op, SearchOp):
        return {
            "kind": "search",
            "namespace_prefix": list(op.namespace_prefix),
            "filter": to_wire(op.filter),
            "limit": op.limit,
            "offset": op.offset,
            "query": op.query,
        }
    if isinstance(op, PutOp):
        index = op.index if op.index is False or op.index is None else list(op.index)
        return {"kind": "put", "namespace": list(op.namespace), "key": op.key, "value": to_wire(op.value), "index": index}
    if isinstance(op, ListNamespacesOp):
        conditions = [{"match_type": c.match_type, "path": list(c.path)} for c in op.match_conditions or ()]
        return {"kind": "list_namespaces", "match_conditions": conditions, "max_depth": op.max_depth, "limit": op.limit, "offset": op.offset}
    raise TypeError(f"unknown store operation {type(op).__name__}")


def _time(value: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))


def _item(raw: dict[str, Any] | None, search: bool = False) -> Item | None:
    if raw is None:
        return None
    fields = dict(namespace=tuple(raw["namespace"]), key=raw["key"], value=raw["value"], created_at=_time(raw["created_at"]), updated_at=_time(raw["updated_at"]))
    return SearchItem(**fields, score=raw.get("score")) if search else Item(**fields)


def _result(op: Op, raw: Any) -> Result:
    if isinstance(op, GetOp):
        return _item(raw)
    if isinstance(op, SearchOp):
        return [_item(r, search=True) for r in raw]
    if isinstance(op, ListNamespacesOp):
        return [tuple(ns) for ns in raw]
    return None


class RemoteStore(BaseStore):
    def __init__(self, call: Call) -> None:
        self._call = call

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        raw = await self._call("store.batch", {"ops": [_op(op) for op in ops]})
        return [_result(op, r) for op, r in zip(ops, raw)]

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        raise NotImplementedError("Slipway's Python worker runs graphs asynchronously: use the store's async methods (aget, aput, asearch)")
