"""The worker's loop: requests from the TypeScript server, each in a task of its own."""

import asyncio
import contextvars
import os
import platform
import sys
import traceback
import uuid
import warnings
from typing import Any

from langgraph.types import Command, Send

from . import PROTOCOL_VERSION, WORKER_VERSION
from .frames import FrameWriter, open_channel, read_frame
from . import auth as custom_auth
from . import http_app
from .graphs import GraphLoadError, import_export, is_factory, produce
from .remote_saver import RUN_SAVES, RemoteSaver, RunSaves
from .remote_store import RemoteStore
from .wire import to_wire

# The server's request a callback serves: the server answers it with that request's checkpointer.
CURRENT_REQUEST: contextvars.ContextVar[int | None] = contextvars.ContextVar("slipway_request", default=None)

CHANNEL_FD = 3


class CallbackError(Exception):
    """The server could not answer a callback (its storage failed, say)."""


def _langgraph_version() -> str:
    try:
        from importlib.metadata import version

        return version("langgraph")
    except Exception:
        return "unknown"


def _snapshot(snapshot: Any) -> dict[str, Any]:
    """A StateSnapshot in the shape the server's state code reads (graphs/registry.ts)."""

    def task(t: Any) -> dict[str, Any]:
        state = t.state
        return {
            "id": t.id,
            "name": t.name,
            "path": to_wire(getattr(t, "path", None)),
            "error": to_wire(t.error) if t.error is not None else None,
            "interrupts": to_wire(t.interrupts),
            "state": _snapshot(state) if hasattr(state, "values") and hasattr(state, "next") else to_wire(state),
            "result": to_wire(getattr(t, "result", None)),
        }

    return {
        "values": to_wire(snapshot.values),
        "next": list(snapshot.next),
        "config": to_wire(snapshot.config),
        "metadata": to_wire(snapshot.metadata),
        "createdAt": snapshot.created_at,
        "parentConfig": to_wire(snapshot.parent_config),
        "tasks": [task(t) for t in snapshot.tasks],
    }


def _send_of(goto: Any) -> Any:
    if isinstance(goto, dict) and "node" in goto:
        return Send(goto["node"], goto.get("input"))
    return goto


def _input(message: dict[str, Any]) -> Any:
    command = message.get("command")
    if command is None:
        return message.get("input")
    fields: dict[str, Any] = {}
    if command.get("update") is not None:
        fields["update"] = command["update"]
    if "resume" in command:
        fields["resume"] = command["resume"]
    goto = command.get("goto")
    if goto is not None:
        fields["goto"] = [_send_of(g) for g in goto] if isinstance(goto, list) else _send_of(goto)
    return Command(**fields)


class Worker:
    def __init__(self, frames: FrameWriter) -> None:
        self.frames = frames
        self.sources: dict[str, Any] = {}
        self.compiled: dict[str, Any] = {}
        self.auth: Any = None
        self.app: Any = None
        self.lifespan: http_app.Lifespan | None = None
        self.tasks: dict[int, asyncio.Task[Any]] = {}
        self.callbacks: dict[int, asyncio.Future[Any]] = {}
        self.next_callback = 0
        self.saver = RemoteSaver(self.call)
        self.store = RemoteStore(self.call)

    async def call(self, op: str, args: dict[str, Any]) -> Any:
        self.next_callback += 1
        cb = self.next_callback
        future = asyncio.get_running_loop().create_future()
        self.callbacks[cb] = future
        try:
            await self.frames.send({"cb": cb, "for": CURRENT_REQUEST.get(), "op": op, **args})
            return await future
        finally:
            self.callbacks.pop(cb, None)

    def answered(self, message: dict[str, Any]) -> None:
        future = self.callbacks.get(message["cb"])
        if future is None or future.done():
            return
        if "error" in message:
            future.set_exception(CallbackError(message["error"].get("message", "callback failed")))
        else:
            future.set_result(message.get("ok"))

    def start(self, message: dict[str, Any]) -> None:
        request_id = message["id"]
        if message.get("op") == "cancel":
            task = self.tasks.get(message.get("target"))
            if task is not None:
                task.cancel()
            asyncio.ensure_future(self.frames.send({"id": request_id, "ok": task is not None}))
            return
        context = contextvars.copy_context()
        context.run(CURRENT_REQUEST.set, request_id)
        self.tasks[request_id] = asyncio.get_running_loop().create_task(self.handle(message), context=context)

    async def handle(self, message: dict[str, Any]) -> None:
        request_id = message["id"]
        try:
            operation = getattr(self, "op_" + str(message.get("op")), None)
            if operation is None:
                raise ValueError(f"unknown operation {message.get('op')!r}")
            result = await operation(message)
            await self.frames.send({"id": request_id, "ok": result})
        except asyncio.CancelledError:
            await self.frames.send({"id": request_id, "cancelled": True})
        except BaseException as error:  # noqa: BLE001 - every failure goes back to the server
            await self.frames.send(
                {
                    "id": request_id,
                    "error": {"type": type(error).__name__, "message": str(error), "traceback": traceback.format_exc()},
                }
            )
        finally:
            self.tasks.pop(request_id, None)

    async def graph_for(self, message: dict[str, Any]) -> Any:
        graph_id = message["graph_id"]
        if graph_id in self.compiled:
            return self.compiled[graph_id]
        if graph_id not in self.sources:
            raise GraphLoadError(f'graph "{graph_id}" is not loaded')
        return await produce(graph_id, self.sources[graph_id], message.get("config") or {}, self.saver, self.store)

    async def op_load(self, message: dict[str, Any]) -> dict[str, Any]:
        loaded: dict[str, Any] = {}
        for spec in message["graphs"]:
            graph_id = spec["graph_id"]
            source = import_export(graph_id, spec)
            self.sources[graph_id] = source
            factory = is_factory(source)
            if not factory:
                self.compiled[graph_id] = await produce(graph_id, source, {}, self.saver, self.store)
            loaded[graph_id] = {"factory": factory}
        return loaded

    async def op_load_auth(self, message: dict[str, Any]) -> dict[str, Any]:
        self.auth = custom_auth.load_auth(message)
        return custom_auth.describe(self.auth)

    async def op_authenticate(self, message: dict[str, Any]) -> dict[str, Any]:
        return await custom_auth.authenticate(self._loaded_auth(), message)

    async def op_authorize(self, message: dict[str, Any]) -> dict[str, Any]:
        return await custom_auth.authorize(self._loaded_auth(), message)

    def _loaded_auth(self) -> Any:
        if self.auth is None:
            raise GraphLoadError("auth.path is not loaded")
        return self.auth

    async def op_load_app(self, message: dict[str, Any]) -> None:
        app = http_app.load_app(message)
        lifespan = http_app.Lifespan(app)
        await lifespan.startup()
        self.app, self.lifespan = app, lifespan

    async def op_http(self, message: dict[str, Any]) -> None:
        if self.app is None:
            raise GraphLoadError("http.app is not loaded")
        request_id = message["id"]

        async def chunk(part: dict[str, Any]) -> None:
            await self.frames.send({"id": request_id, "chunk": part})

        await http_app.serve(self.app, message, chunk)

    async def op_run(self, message: dict[str, Any]) -> None:
        request_id = message["id"]
        graph = await self.graph_for(message)
        options: dict[str, Any] = {"stream_mode": message.get("stream_mode") or ["values"], "subgraphs": bool(message.get("subgraphs"))}
        for key in ("interrupt_before", "interrupt_after", "durability", "context"):
            if message.get(key) is not None:
                options[key] = message[key]
        config = custom_auth.with_auth_user(message.get("config") or {})
        if message.get("events"):
            # streamEvents v2, for the API's `events` and `messages` modes: the run's own
            # events carry the server's run id, which is how the server finds its chunks.
            config = {**config, "run_id": uuid.UUID(message["run_id"])}
            saves = RunSaves()
            RUN_SAVES.set(saves)
            async for event in graph.astream_events(_input(message), config, version="v2", **options):
                await self.frames.send({"id": request_id, "chunk": to_wire(event)})
            return await _final_state(graph, config, saves)
        saves = RunSaves()
        RUN_SAVES.set(saves)
        async for chunk in graph.astream(_input(message), config, **options):
            namespace, mode, data = chunk if options["subgraphs"] else ((), *chunk)
            await self.frames.send({"id": request_id, "chunk": [list(namespace), mode, to_wire(data)]})
        return await _final_state(graph, config, saves)

    async def op_state(self, message: dict[str, Any]) -> dict[str, Any]:
        graph = await self.graph_for(message)
        return _snapshot(await graph.aget_state(message["config"], subgraphs=bool(message.get("subgraphs"))))

    async def op_history(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        graph = await self.graph_for(message)
        found = []
        async for snapshot in graph.aget_state_history(
            message["config"], filter=message.get("filter"), before=message.get("before"), limit=message.get("limit")
        ):
            found.append(_snapshot(snapshot))
        return found

    async def op_update_state(self, message: dict[str, Any]) -> Any:
        graph = await self.graph_for(message)
        values = _input({"command": message["command"]}) if message.get("command") else message.get("values")
        return to_wire(await graph.aupdate_state(message["config"], values, as_node=message.get("as_node")))

    async def op_graph(self, message: dict[str, Any]) -> Any:
        graph = await self.graph_for(message)
        drawable = await graph.aget_graph(message.get("config"), xray=message.get("xray") or False)
        return to_wire(drawable.to_json())

    async def op_schemas(self, message: dict[str, Any]) -> dict[str, Any]:
        graph = await self.graph_for(message)
        return _json_schemas(graph)

    async def op_subgraphs(self, message: dict[str, Any]) -> dict[str, Any]:
        """The schemas of the graph's subgraphs by namespace (`child|grandchild` when recursing), as the vendor's server lists them."""
        graph = await self.graph_for(message)
        found: dict[str, Any] = {}
        async for namespace, subgraph in graph.aget_subgraphs(namespace=message.get("namespace"), recurse=bool(message.get("recurse"))):
            found[namespace] = _json_schemas(subgraph)
        return found

    async def op_ping(self, message: dict[str, Any]) -> dict[str, Any]:
        # Answered by the event loop itself: a loop held up by a node goes unanswered.
        return {"rss_bytes": _resident_bytes()}


async def _final_state(graph: Any, config: dict[str, Any], saves: RunSaves) -> dict[str, Any] | None:
    """The thread's state at the run's end, read from the run's own last save: the server writes it with the run's end
    (decision 0021) without asking for it again. `None` when the run saved nothing here to read it from."""
    if saves.latest is None:
        return None
    saves.serving = True
    snapshot = await graph.aget_state({"configurable": {"thread_id": saves.thread_id}})
    return {"state": _snapshot(snapshot)}


def _json_schemas(graph: Any) -> dict[str, Any]:
    """A graph's JSON Schemas, as the vendor's Python server reads them; a part pydantic cannot describe is left out, not the whole."""

    def attempt(read: Any) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return read()
        except Exception:  # noqa: BLE001 - a schema that cannot be made is absent
            return None

    state = _state_schema(graph)
    return {
        "input": attempt(graph.get_input_jsonschema) or state,
        "output": attempt(graph.get_output_jsonschema) or state,
        "state": state,
        "config": attempt(graph.get_config_jsonschema),
        "context": attempt(graph.get_context_jsonschema),
    }


def _state_schema(graph: Any) -> dict[str, Any]:
    """The state's schema from its channels: each channel's update type, or any value where pydantic cannot describe it."""
    from pydantic import TypeAdapter, create_model

    fields: dict[str, Any] = {}
    for name in graph.stream_channels_list:
        update_type = getattr(graph.channels[name], "UpdateType", Any)
        try:
            TypeAdapter(update_type).json_schema()
            fields[name] = (update_type, None)
        except Exception:  # noqa: BLE001
            fields[name] = (Any, None)
    return create_model(graph.get_name("State"), **fields).model_json_schema()


def _resident_bytes() -> int:
    """This process's resident memory now, for the server's watchdog (0 where /proc is absent)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


async def serve(root: str) -> None:
    # The project's own modules import as they would under the vendor's server.
    sys.path.insert(0, os.path.abspath(root))
    reader, writer = await open_channel(CHANNEL_FD)
    frames = FrameWriter(writer)
    await frames.send(
        {
            "hello": {
                "protocol": PROTOCOL_VERSION,
                "worker": WORKER_VERSION,
                "langgraph": _langgraph_version(),
                "python": platform.python_version(),
            }
        }
    )
    worker = Worker(frames)
    while True:
        message = await read_frame(reader)
        if message is None:
            break
        if "cb" in message:
            worker.answered(message)
        else:
            worker.start(message)
    for task in list(worker.tasks.values()):
        task.cancel()
    if worker.lifespan is not None:
        await worker.lifespan.shutdown()
