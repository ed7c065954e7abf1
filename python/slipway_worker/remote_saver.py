"""A checkpointer whose storage is the TypeScript server's (decision 0036, part 6).

Every method is a callback over the socket pair, answered by the server's own saver, so a
Python graph's checkpoints share its statements, its run tails and its crash rules.
Channel values are serialized here, by LangGraph's serializer, and stored as they are.
"""

import contextvars
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import WRITES_IDX_MAP, BaseCheckpointSaver, ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple

from .wire import dump_blob, load_blob, to_wire

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


def _plain_config(config: RunnableConfig | None) -> dict[str, Any] | None:
    """What of a config the server's saver reads: its ids and metadata, as JSON."""
    if config is None:
        return None
    configurable = {k: v for k, v in (config.get("configurable") or {}).items() if not k.startswith("__")}
    return {"configurable": to_wire(configurable), "metadata": to_wire(config.get("metadata") or {})}


class RunSaves:
    """A run's newest root checkpoint and its writes, as the server stored them: what its end reads back without a callback.

    Saves and writes reach the server concurrently (a checkpoint's writes may be stored
    before the checkpoint's own put answers), so writes are kept by checkpoint id, and
    checkpoint ids, which LangGraph makes in increasing order, decide which is newest.
    """

    def __init__(self) -> None:
        self.thread_id: Any = None
        self.latest: CheckpointTuple | None = None
        self.writes: dict[str, dict[tuple[str, int], tuple[str, str, Any]]] = {}
        # Answers reads only once the run is over: during it, every read goes to the server as before.
        self.serving = False

    def saved(self, config: RunnableConfig, stored: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata) -> None:
        configurable = config.get("configurable") or {}
        if configurable.get("checkpoint_ns", "") != "":
            return
        if self.latest is not None and checkpoint["id"] <= self.latest.checkpoint["id"]:
            return
        parent = configurable.get("checkpoint_id")
        self.thread_id = configurable.get("thread_id")
        parent_config = {"configurable": {"thread_id": self.thread_id, "checkpoint_ns": "", "checkpoint_id": parent}} if parent else None
        self.latest = CheckpointTuple(config=stored, checkpoint=checkpoint, metadata=metadata, parent_config=parent_config, pending_writes=[])
        # Writes of older checkpoints are no longer read.
        self.writes = {cid: kept for cid, kept in self.writes.items() if cid >= checkpoint["id"]}

    def wrote(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str) -> None:
        configurable = config.get("configurable") or {}
        checkpoint_id = configurable.get("checkpoint_id")
        if configurable.get("checkpoint_ns", "") != "" or not checkpoint_id:
            return
        if self.latest is not None and checkpoint_id < self.latest.checkpoint["id"]:
            return
        kept = self.writes.setdefault(checkpoint_id, {})
        # As LangGraph's own savers keep them: a task's ordinary write is kept once, a special one (error, interrupt) replaced.
        for index, (channel, value) in enumerate(writes):
            key = (task_id, WRITES_IDX_MAP.get(channel, index))
            if key[1] >= 0 and key in kept:
                continue
            kept[key] = (task_id, channel, value)

    def answer(self, config: RunnableConfig) -> CheckpointTuple | None:
        configurable = config.get("configurable") or {}
        latest = self.latest
        if not self.serving or latest is None or configurable.get("thread_id") != self.thread_id or configurable.get("checkpoint_ns", "") != "":
            return None
        if configurable.get("checkpoint_id") not in (None, latest.checkpoint["id"]):
            return None
        return latest._replace(pending_writes=list(self.writes.get(latest.checkpoint["id"], {}).values()))


# The saves of the run the current request serves (None outside a run).
RUN_SAVES: contextvars.ContextVar[RunSaves | None] = contextvars.ContextVar("slipway_run_saves", default=None)


class RemoteSaver(BaseCheckpointSaver):
    def __init__(self, call: Call) -> None:
        super().__init__()
        self._call = call

    def _tuple(self, raw: dict[str, Any] | None) -> CheckpointTuple | None:
        if raw is None:
            return None
        checkpoint = dict(raw["checkpoint"])
        checkpoint["channel_values"] = {k: load_blob(self.serde, b) for k, b in (checkpoint.get("channel_values") or {}).items()}
        writes = [(task, channel, load_blob(self.serde, blob)) for task, channel, blob in raw.get("pending_writes") or []]
        return CheckpointTuple(
            config=raw["config"],
            checkpoint=checkpoint,
            metadata=raw.get("metadata") or {},
            parent_config=raw.get("parent_config"),
            pending_writes=writes,
        )

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        saves = RUN_SAVES.get()
        known = saves.answer(config) if saves is not None else None
        if known is not None:
            return known
        return self._tuple(await self._call("checkpoint.get_tuple", {"config": _plain_config(config)}))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = await self._call(
            "checkpoint.list",
            {"config": _plain_config(config), "filter": to_wire(filter), "before": _plain_config(before), "limit": limit},
        )
        for raw in found:
            yield self._tuple(raw)

    async def aput(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
    ) -> RunnableConfig:
        values = checkpoint["channel_values"]
        skeleton = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        # Every channel, not only the changed ones: the server keeps a run's last checkpoint
        # whole in memory to answer its end (decision 0021); it stores only `new_versions`.
        skeleton["channel_values"] = {ch: dump_blob(self.serde, value) for ch, value in values.items()}
        stored = await self._call(
            "checkpoint.put",
            {"config": _plain_config(config), "checkpoint": to_wire(skeleton), "metadata": to_wire(metadata), "new_versions": to_wire(new_versions)},
        )
        saves = RUN_SAVES.get()
        if saves is not None:
            saves.saved(config, stored, checkpoint, metadata)
        return stored

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = "") -> None:
        await self._call(
            "checkpoint.put_writes",
            {
                "config": _plain_config(config),
                "writes": [[channel, dump_blob(self.serde, value)] for channel, value in writes],
                "task_id": task_id,
                "task_path": task_path,
            },
        )
        saves = RUN_SAVES.get()
        if saves is not None:
            saves.wrote(config, writes, task_id)

    # The graph runs on the worker's event loop only; synchronous callers have no loop to wait on.
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        raise NotImplementedError("Slipway's Python worker runs graphs asynchronously: use ainvoke/astream")

    def list(self, config: RunnableConfig | None, **kwargs: Any):  # type: ignore[override]
        raise NotImplementedError("Slipway's Python worker runs graphs asynchronously: use ainvoke/astream")

    def put(self, *args: Any, **kwargs: Any) -> RunnableConfig:
        raise NotImplementedError("Slipway's Python worker runs graphs asynchronously: use ainvoke/astream")

    def put_writes(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("Slipway's Python worker runs graphs asynchronously: use ainvoke/astream")
