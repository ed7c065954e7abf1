"""Loaded by the Python worker of bench/python-durability.ts only (this folder is put first on
its PYTHONPATH), never by the product: decision 0036's option B as a throwaway prototype,
and a stopwatch on the checkpointer for both options.

- SLIPWAY_BENCH_SAVE_STATS=<file>: every checkpointer call's wall time, as the graph waits
  for it, summed per method and written to <file> as JSON twice a second.
- SLIPWAY_BENCH_OPTION_B=<PostgreSQL URL>, SLIPWAY_BENCH_OPTION_B_SCHEMA=<schema>: the
  worker's checkpointer writes (and reads back its checkpoints) in the server's tables
  itself, through psycopg, with the same stored functions the TypeScript saver calls
  (put_batch, checkpoint_tuple): one statement, in its own transaction, per save. Lists
  (history) still call back. Rows are what the TypeScript saver would write, so the
  server reads them as its own.
"""

import json
import os
import threading
import time


def _install() -> None:
    stats_path = os.environ.get("SLIPWAY_BENCH_SAVE_STATS")
    dsn = os.environ.get("SLIPWAY_BENCH_OPTION_B")
    if not stats_path and not dsn:
        return
    from slipway_worker import remote_saver, server

    saver_class = _direct_saver(remote_saver, dsn, os.environ.get("SLIPWAY_BENCH_OPTION_B_SCHEMA", "public")) if dsn else remote_saver.RemoteSaver
    if stats_path:
        saver_class = _timed(saver_class, stats_path)
    original_init = server.Worker.__init__

    def init(self, frames):  # type: ignore[no-untyped-def]
        original_init(self, frames)
        self.saver = saver_class(self.call)

    server.Worker.__init__ = init


def _timed(base, path):  # type: ignore[no-untyped-def]
    totals: dict[str, list[float]] = {}
    lock = threading.Lock()

    def note(name: str, started: float) -> None:
        with lock:
            entry = totals.setdefault(name, [0, 0.0])
            entry[0] += 1
            entry[1] += (time.perf_counter() - started) * 1000

    def writer() -> None:
        while True:
            time.sleep(0.5)
            with lock:
                text = json.dumps({name: {"calls": n, "ms": ms} for name, (n, ms) in totals.items()})
            with open(path + ".tmp", "w", encoding="utf8") as out:
                out.write(text)
            os.replace(path + ".tmp", path)

    threading.Thread(target=writer, daemon=True).start()

    def timed(name: str):  # type: ignore[no-untyped-def]
        async def method(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            started = time.perf_counter()
            try:
                return await getattr(base, name)(self, *args, **kwargs)
            finally:
                note(name, started)

        return method

    Timed = type("Timed", (base,), {name: timed(name) for name in ("aput", "aput_writes", "aget_tuple")})
    return Timed


def _direct_saver(remote_saver, dsn: str, schema: str):  # type: ignore[no-untyped-def]
    import psycopg
    from langgraph.checkpoint.base import WRITES_IDX_MAP, CheckpointTuple
    from psycopg_pool import AsyncConnectionPool

    from slipway_worker.wire import BLOB_PREFIX, to_wire

    put_batch = "SELECT put_batch(" + ", ".join(
        f"%s::{t}" for t in ["text[]"] * 11 + ["bytea[]"] + ["text[]"] * 6 + ["int[]", "text[]", "text[]", "bytea[]"]
    ) + ")"
    get_tuple = (
        "SELECT checkpoint_id, parent_checkpoint_id, checkpoint::text, metadata::text, blob_channels, blob_types, blob_values, "
        "write_task_ids, write_channels, write_types, write_values FROM checkpoint_tuple(%s, %s, %s)"
    )
    excluded = {"checkpoint_id", "checkpoint_ns", "checkpoint_map", "langgraph_step", "langgraph_node", "langgraph_triggers",
                "langgraph_path", "langgraph_checkpoint_ns", "__pregel_task_id"}
    pool: list[AsyncConnectionPool] = []

    async def connection_pool() -> AsyncConnectionPool:
        if not pool:
            created = AsyncConnectionPool(dsn, min_size=4, max_size=4, open=False, kwargs={"autocommit": True, "options": f"-c search_path={schema}"})
            await created.open()
            pool.append(created)
        return pool[0]

    class DirectSaver(remote_saver.RemoteSaver):
        async def aput(self, config, checkpoint, metadata, new_versions):  # type: ignore[no-untyped-def]
            conf = config["configurable"]
            thread, ns = str(conf["thread_id"]), conf.get("checkpoint_ns", "")
            inherited = {k: v for k, v in (config.get("metadata") or {}).items() if k not in excluded and not k.startswith("__")}
            skeleton = {k: v for k, v in checkpoint.items() if k != "channel_values"}
            values = checkpoint["channel_values"]
            blobs = []
            for channel, version in new_versions.items():
                if channel in values:
                    kind, data = self.serde.dumps_typed(values[channel])
                    blobs.append((thread, ns, channel, str(version), BLOB_PREFIX + kind, data))
            columns = [[thread], [ns], [checkpoint["id"]], [conf.get("checkpoint_id")], [json.dumps(to_wire(skeleton))],
                       [json.dumps(to_wire({**inherited, **metadata}))]]
            columns += [[b[i] for b in blobs] for i in range(6)] + [[] for _ in range(10)]
            async with (await connection_pool()).connection() as conn:
                await conn.execute(put_batch, columns)
            stored = {"configurable": {"thread_id": conf["thread_id"], "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}
            saves = remote_saver.RUN_SAVES.get()
            if saves is not None:
                saves.saved(config, stored, checkpoint, metadata)
            return stored

        async def aput_writes(self, config, writes, task_id, task_path=""):  # type: ignore[no-untyped-def]
            conf = config["configurable"]
            rows = {}
            for position, (channel, value) in enumerate(writes):
                kind, data = self.serde.dumps_typed(value)
                rows[WRITES_IDX_MAP.get(channel, position)] = (channel, BLOB_PREFIX + kind, data)
            run_id = (config.get("metadata") or {}).get("run_id")
            n = len(rows)
            columns = [[] for _ in range(12)] + [
                [str(conf["thread_id"])] * n, [conf.get("checkpoint_ns", "")] * n, [conf["checkpoint_id"]] * n, [task_id] * n,
                [task_path] * n, [str(run_id) if run_id else None] * n, list(rows),
                [r[0] for r in rows.values()], [r[1] for r in rows.values()], [r[2] for r in rows.values()],
            ]
            async with (await connection_pool()).connection() as conn:
                await conn.execute(put_batch, columns)
            saves = remote_saver.RUN_SAVES.get()
            if saves is not None:
                saves.wrote(config, writes, task_id)

        async def aget_tuple(self, config):  # type: ignore[no-untyped-def]
            saves = remote_saver.RUN_SAVES.get()
            known = saves.answer(config) if saves is not None else None
            if known is not None:
                return known
            conf = config["configurable"]
            async with (await connection_pool()).connection() as conn:
                row = await (await conn.execute(get_tuple, [str(conf["thread_id"]), conf.get("checkpoint_ns", ""), conf.get("checkpoint_id")])).fetchone()
            if row is None:
                return None
            cid, parent, skeleton, metadata, channels, types, blobs, task_ids, wchannels, wtypes, wvalues = row
            load = lambda kind, data: self.serde.loads_typed((kind[len(BLOB_PREFIX):], bytes(data)))  # noqa: E731
            checkpoint = json.loads(skeleton)
            checkpoint["channel_values"] = {c: load(t, b) for c, t, b in zip(channels or [], types or [], blobs or [])}
            thread, ns = conf["thread_id"], conf.get("checkpoint_ns", "")
            at = lambda i: {"configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": i}}  # noqa: E731
            return CheckpointTuple(
                config=at(cid),
                checkpoint=checkpoint,
                metadata=json.loads(metadata),
                parent_config=at(parent) if parent else None,
                pending_writes=[(t, c, load(k, v)) for t, c, k, v in zip(task_ids or [], wchannels or [], wtypes or [], wvalues or [])],
            )

    _ = psycopg  # imported first: a missing psycopg fails the worker's start, not a run
    return DirectSaver


_install()
