"""Loading a project's Python graphs: `./path.py:attr` or `package.module:attr`."""

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any


class GraphLoadError(Exception):
    pass


def _import_file(graph_id: str, path: str) -> Any:
    file = Path(path)
    if not file.is_file():
        raise GraphLoadError(f'graph "{graph_id}": {path} does not exist')
    # A stable module name per file, so two graphs of one file share it and tracebacks read well.
    name = "slipway_graph_" + "".join(c if c.isalnum() else "_" for c in str(file.with_suffix("")))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise GraphLoadError(f'graph "{graph_id}": {path} cannot be imported')
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def import_export(graph_id: str, spec: dict[str, Any]) -> Any:
    module = importlib.import_module(spec["module"]) if spec.get("module") else _import_file(graph_id, spec["path"])
    attr = spec.get("attr") or "graph"
    if not hasattr(module, attr):
        names = sorted(n for n in vars(module) if not n.startswith("_"))
        raise GraphLoadError(f'graph "{graph_id}": {spec.get("path") or spec.get("module")} has no attribute "{attr}" (it has {", ".join(names[:20]) or "nothing public"})')
    return getattr(module, attr)


def is_compiled(value: Any) -> bool:
    return hasattr(value, "astream") and hasattr(value, "aget_state")


def is_builder(value: Any) -> bool:
    return hasattr(value, "compile") and not is_compiled(value)


def is_factory(value: Any) -> bool:
    return callable(value) and not is_compiled(value) and not is_builder(value)


async def produce(graph_id: str, source: Any, config: dict[str, Any], checkpointer: Any, store: Any = None) -> Any:
    """The compiled graph of an export, with our checkpointer; a factory is called with the run's config."""
    value = source
    if is_factory(value):
        takes_config = len(inspect.signature(value).parameters) > 0
        value = value(config) if takes_config else value()
        if inspect.isawaitable(value):
            value = await value
    if is_builder(value):
        return value.compile(checkpointer=checkpointer, store=store)
    if is_compiled(value):
        return value.copy(update={"checkpointer": checkpointer, "store": store})
    raise GraphLoadError(f'graph "{graph_id}": the export is a {type(value).__name__}, not a compiled graph, a StateGraph or a function returning one')
