"""A project's `auth.path` in Python: langgraph_sdk's `Auth`, whose handlers the server asks this worker to run.

The server keeps the rules of custom auth (which handler a route calls, how filters
apply, decision 0015); the worker only calls the project's functions and says what
they answered, and how they changed the value they were given.
"""

import inspect
from typing import Any
from urllib.parse import parse_qsl

from .graphs import GraphLoadError, import_export
from .wire import to_wire


class AuthUser(dict):
    """The user a handler sees: `ctx.user.identity` and `ctx.user["identity"]` both work, as on the vendor's server."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class RequestView:
    """What an `authenticate` handler may read of the request (the vendor passes Starlette's)."""

    def __init__(self, message: dict[str, Any]) -> None:
        self.method = message.get("method", "GET")
        self.path = message.get("path", "/")
        self.url = self.path + (f"?{message['query']}" if message.get("query") else "")
        self.headers = {str(k).lower(): str(v) for k, v in (message.get("headers") or {}).items()}
        self.query_params = dict(parse_qsl(message.get("query") or ""))
        self.path_params = dict(message.get("path_params") or {})


def with_auth_user(config: dict[str, Any]) -> dict[str, Any]:
    """A run's config with its user (set by the server's auth) readable as `user.identity`, as the vendor gives it."""
    configurable = config.get("configurable") or {}
    user = configurable.get("langgraph_auth_user")
    if not isinstance(user, dict) or isinstance(user, AuthUser):
        return config
    return {**config, "configurable": {**configurable, "langgraph_auth_user": AuthUser(user)}}


def load_auth(spec: dict[str, Any]) -> Any:
    auth = import_export("auth.path", spec)
    if not hasattr(auth, "_authenticate_handler") or not hasattr(auth, "_handlers"):
        raise GraphLoadError(f"auth.path: {spec.get('path')}:{spec.get('attr')} is a {type(auth).__name__}, not a langgraph_sdk.Auth")
    return auth


def describe(auth: Any) -> dict[str, Any]:
    """Which handlers exist, named as the server's rules name them: `resource:action`, `resource`, `*:action`, `*`."""

    def key(resource: str, action: str) -> str:
        if action == "*":
            return resource
        return f"{resource}:{action}"

    handlers = [key(resource, action) for (resource, action) in auth._handlers]
    if auth._global_handlers:
        handlers.append("*")
    return {"authenticate": auth._authenticate_handler is not None, "handlers": handlers}


def _refusal(error: BaseException) -> dict[str, Any] | None:
    """The SDK's HTTPException (any copy) as an answer the server sends; anything else is a failure."""
    status = getattr(error, "status_code", None)
    if not isinstance(status, int) or not hasattr(error, "detail"):
        return None
    headers = getattr(error, "headers", None) or {}
    return {"status": status, "detail": str(getattr(error, "detail", "") or ""), "headers": {str(k): str(v) for k, v in dict(headers).items()}}


def _user_to_wire(user: Any) -> Any:
    if user is None or isinstance(user, (str, dict)):
        return to_wire(user)
    if hasattr(user, "model_dump"):
        return to_wire(user)
    # An object with the SDK's user properties (BaseUser, StudioUser, a class of the project's).
    fields = {name: getattr(user, name) for name in ("identity", "display_name", "is_authenticated", "permissions") if hasattr(user, name)}
    return to_wire(fields)


async def authenticate(auth: Any, message: dict[str, Any]) -> dict[str, Any]:
    handler = auth._authenticate_handler
    if handler is None:
        return {"user": None}
    request = RequestView(message)
    offered = {
        "request": request,
        "method": request.method,
        "path": request.path,
        "path_params": request.path_params,
        "query_params": request.query_params,
        # As the vendor documents it: header names and values as bytes.
        "headers": {k.encode("latin-1"): v.encode("latin-1") for k, v in request.headers.items()},
        "authorization": request.headers.get("authorization"),
    }
    wanted = inspect.signature(handler).parameters
    try:
        result = handler(**{name: offered[name] for name in wanted if name in offered})
        if inspect.isawaitable(result):
            result = await result
    except Exception as error:  # noqa: BLE001 - an HTTPException is an answer; anything else fails closed on the server
        refused = _refusal(error)
        if refused is None:
            raise
        return {"refused": refused}
    return {"user": _user_to_wire(result)}


def _handler_for(auth: Any, key: str) -> Any:
    if key == "*":
        return auth._global_handlers[-1]
    resource, _, action = key.partition(":")
    return auth._handlers[(resource, action or "*")][-1]


async def authorize(auth: Any, message: dict[str, Any]) -> dict[str, Any]:
    from langgraph_sdk.auth.types import AuthContext

    handler = _handler_for(auth, message["key"])
    value = message.get("value")
    ctx = AuthContext(
        permissions=list(message.get("permissions") or []),
        user=AuthUser(message.get("user") or {}),
        resource=message["resource"],
        action=message["action"],
    )
    try:
        result = await handler(ctx=ctx, value=value)
    except Exception as error:  # noqa: BLE001 - as in authenticate
        refused = _refusal(error)
        if refused is None:
            raise
        return {"refused": refused}
    # The handler may have changed the value (an owner in its metadata): the server applies that.
    return {"result": to_wire(result), "value": to_wire(value)}
