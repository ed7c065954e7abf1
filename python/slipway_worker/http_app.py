"""A project's `http.app` in Python: an ASGI app (Starlette, FastAPI, or a bare ASGI callable).

The server keeps HTTP: it takes the connection, applies its API key and custom auth, and
hands each request to this worker whole. The worker calls the app with an ASGI scope and
sends back what the app sends: the start of the response, then its body in pieces.
A 404 from the app sends the request on to the built-in routes (docs/python-protocol.md).
"""

import asyncio
import base64
import contextlib
from typing import Any, Awaitable, Callable
from urllib.parse import unquote

from .graphs import GraphLoadError, import_export

Send = Callable[[dict[str, Any]], Awaitable[None]]


def load_app(spec: dict[str, Any]) -> Any:
    app = import_export("http.app", spec)
    if not callable(app):
        raise GraphLoadError(f"http.app: {spec.get('path')}:{spec.get('attr')} is a {type(app).__name__}, not an ASGI app (Starlette, FastAPI)")
    return app


class Lifespan:
    """The app's lifespan (startup and shutdown handlers), run as an ASGI server runs it; an app without one is fine."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.task: asyncio.Task[Any] | None = None

    async def _run(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}
        try:
            await self.app(scope, self.inbox.get, self.outbox.put)
        except BaseException:  # noqa: BLE001 - an app that does not speak lifespan raises here
            await self.outbox.put({"type": "lifespan.unsupported"})

    async def startup(self) -> None:
        self.task = asyncio.ensure_future(self._run())
        await self.inbox.put({"type": "lifespan.startup"})
        answer = await self.outbox.get()
        if answer["type"] == "lifespan.startup.failed":
            raise GraphLoadError(f"http.app: its startup failed: {answer.get('message', '')}")
        if answer["type"] == "lifespan.unsupported":
            self.task = None

    async def shutdown(self) -> None:
        if self.task is None or self.task.done():
            return
        await self.inbox.put({"type": "lifespan.shutdown"})
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.outbox.get(), timeout=5)


def _scope(message: dict[str, Any]) -> dict[str, Any]:
    path = message.get("path") or "/"
    client = message.get("client")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": message.get("method", "GET"),
        "scheme": message.get("scheme") or "http",
        "path": unquote(path),
        "raw_path": path.encode("latin-1", "replace"),
        "query_string": (message.get("query") or "").encode("latin-1", "replace"),
        "root_path": "",
        "headers": [(str(k).lower().encode("latin-1", "replace"), str(v).encode("latin-1", "replace")) for k, v in message.get("headers") or []],
        "client": (client, 0) if client else None,
        "server": None,
        "state": {},
    }


async def serve(app: Any, message: dict[str, Any], chunk: Send) -> None:
    """One request through the app; each message the app sends becomes a chunk of this request's answer."""
    body = base64.b64decode(message.get("body") or "")
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        # Nothing more comes: the client's going away cancels this request's task.
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    async def send(event: dict[str, Any]) -> None:
        if event["type"] == "http.response.start":
            headers = [[bytes(k).decode("latin-1"), bytes(v).decode("latin-1")] for k, v in event.get("headers") or []]
            await chunk({"status": int(event["status"]), "headers": headers})
        elif event["type"] == "http.response.body" and event.get("body"):
            await chunk({"body": base64.b64encode(bytes(event["body"])).decode("ascii")})

    await app(_scope(message), receive, send)
