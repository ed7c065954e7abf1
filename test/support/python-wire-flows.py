"""What the official Python SDK and RemoteGraph see of one language's graphs, as one JSON object.

Usage: python python-wire-flows.py URL API_KEY LABEL AGENT SLOW APPROVE
AGENT answers through a streaming chat model ("You said: <text>", examples/agent or its
Python twin), SLOW ticks until its steps run out or the store releases it (the sample
project's slow graph or py_slow.py), APPROVE stops at an interrupt. The test runs this
once for a JS trio and once for its Python twins and compares the two objects: ids,
timestamps and what differs between LangGraph's two libraries are summarized away,
the wire's shapes are kept.
"""

import asyncio
import contextlib
import json
import re
import sys
import time
import uuid

import httpx
from langgraph.pregel.remote import RemoteGraph
from langgraph.types import Command
from langgraph_sdk import get_client
from sdk_values import said, user  # beside this script, so on its sys.path

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
MODES = ["values", "updates", "messages-tuple", "custom", "debug", "checkpoints", "tasks"]


async def status_of(call):
    """The HTTP status a call ends with: 200, or the status the SDK raised."""
    try:
        await call
        return 200
    except httpx.HTTPStatusError as error:
        return error.response.status_code


async def until_status(client, thread, run, wanted, timeout=60.0):
    deadline = time.monotonic() + timeout
    while True:
        status = (await client.runs.get(thread, run))["status"]
        if status == wanted or time.monotonic() > deadline:
            return status
        await asyncio.sleep(0.05)


def summarize_stream(parts):
    """Each mode's parts reduced to what both languages must agree on."""
    by = {}
    for part in parts:
        by.setdefault(part.event, []).append(part.data)
    tuples = by.get("messages", [])
    return {
        "events": sorted(by),
        "first": parts[0].event,
        "metadata_keys": sorted(by["metadata"][0]),
        "values": said(by["values"][-1]),
        "values_count": len(by["values"]),
        "updates": [sorted(update) for update in by.get("updates", [])],
        "messages_text": "".join(message["content"] for message, meta in tuples if meta.get("langgraph_node") == "agent"),
        "messages_are_chunks": sorted({message["type"] for message, _ in tuples}),
        "checkpoints": [[sorted(c), c["next"], c.get("parent_checkpoint") is not None] for c in by.get("checkpoints", [])],
        "tasks": [sorted(t) for t in by.get("tasks", [])],
        "debug": [d["type"] for d in by.get("debug", [])],
        "debug_keys": sorted({key for d in by.get("debug", []) for key in d}),
    }


async def stream_flows(client, thread, agent):
    seen = {"modes": summarize_stream([part async for part in client.runs.stream(thread, agent, input=user("hi"), stream_mode=MODES)])}
    messages = [part async for part in client.runs.stream(thread, agent, input=user("words"), stream_mode="messages")]
    complete = [part.data for part in messages if part.event == "messages/complete"]
    seen["messages"] = {
        "events": sorted({part.event for part in messages}),
        "complete": [[m["type"], m["content"]] for batch in complete for m in batch],
    }
    events = [part async for part in client.runs.stream(thread, agent, input=user("events"), stream_mode="events")]
    kinds = [part.data["event"] for part in events if part.event == "events"]
    seen["events"] = {
        "streamed_text": "".join(part.data["data"]["chunk"]["content"] for part in events if part.event == "events" and part.data["event"] == "on_chat_model_stream"),
        "has": sorted({"on_chain_start", "on_chain_end", "on_chat_model_start", "on_chat_model_end"} & set(kinds)),
        "first": kinds[0],
        "last": kinds[-1],
    }
    return seen


async def resumable(client, slow):
    """A run's stream read part way, then resumed with Last-Event-ID: nothing lost, nothing twice."""
    thread = (await client.threads.create())["thread_id"]
    run = await client.runs.create(thread, slow, input={"steps": 4, "delay_ms": 50}, stream_mode=["updates"], stream_resumable=True)
    first = []
    async with contextlib.aclosing(client.runs.join_stream(thread, run["run_id"], last_event_id="-1")) as parts:
        async for part in parts:
            first.append(part)
            if part.event == "updates":
                break
    rest = [part async for part in client.runs.join_stream(thread, run["run_id"], last_event_id=first[-1].id)]
    whole = [part async for part in client.runs.join_stream(thread, run["run_id"], last_event_id="-1")]
    ticks = lambda parts: [part.data["tick"]["ticks"] for part in parts if part.event == "updates"]
    return {
        "first": [part.event for part in first],
        "rest_ticks": ticks(rest),
        "whole_ticks": ticks(whole),
        "joined_is_whole": ticks(first) + ticks(rest) == ticks(whole),
        "ids_increase": all(a.id < b.id for a, b in zip(whole, whole[1:]) if a.id and b.id and len(a.id) == len(b.id)),
        "ids_present": all(part.id for part in whole if part.event != "end"),
    }


async def held(client, thread, slow, key, **kwargs):
    """A slow run on `thread` that ticks until the store releases `key`."""
    return await client.runs.create(
        thread, slow, input={"steps": 1, "delay_ms": 100, "release_key": key}, config={"recursion_limit": 1000}, **kwargs
    )


async def strategies(client, slow):
    seen = {}
    thread = (await client.threads.create())["thread_id"]
    first = await held(client, thread, slow, f"first-{uuid.uuid4()}")
    seen["first_running"] = await until_status(client, thread, first["run_id"], "running")
    try:
        await held(client, thread, slow, "never", multitask_strategy="reject")
        seen["reject"] = 200
    except httpx.HTTPStatusError as error:
        seen["reject"] = [error.response.status_code, UUID.sub("<id>", error.response.json()["detail"])]
    # The first run's release_key stays in the thread's state: the second brings a key released already.
    released = f"released-{uuid.uuid4()}"
    await client.store.put_item(["release"], released, {"at": "start"})
    second = await client.runs.create(thread, slow, input={"steps": 1, "delay_ms": 10, "release_key": released}, multitask_strategy="interrupt")
    joined = await client.runs.join(thread, second["run_id"])
    seen["interrupt"] = {
        "first": await until_status(client, thread, first["run_id"], "interrupted"),
        "second": (await client.runs.get(thread, second["run_id"]))["status"],
        "second_values": {"steps": joined["steps"], "last_tick": joined["ticks"][-1]},
    }
    # Cancel, waiting for it; the thread is then free for a run.
    third = await held(client, thread, slow, f"third-{uuid.uuid4()}")
    await until_status(client, thread, third["run_id"], "running")
    await client.runs.cancel(thread, third["run_id"], wait=True)
    seen["cancel"] = {
        "status": (await client.runs.get(thread, third["run_id"]))["status"],
        "thread": (await client.threads.get(thread))["status"],
    }
    # Released through the store API, a held run ends by itself.
    key = f"release-{uuid.uuid4()}"
    fourth = await held(client, thread, slow, key)
    await until_status(client, thread, fourth["run_id"], "running")
    await client.store.put_item(["release"], key, {"at": "now"})
    await client.runs.join(thread, fourth["run_id"])
    seen["released"] = (await client.runs.get(thread, fourth["run_id"]))["status"]
    return seen


async def state_flows(client, thread):
    state = await client.threads.get_state(thread)
    history = await client.threads.get_history(thread, limit=100)
    older = await client.threads.get_history(thread, limit=2, before=history[1]["checkpoint"])
    return {
        "keys": sorted(state),
        "values": said(state["values"]),
        "next": state["next"],
        "checkpoint_keys": sorted(state["checkpoint"]),
        "metadata_has": sorted({"source", "step", "run_id", "graph_id", "assistant_id", "thread_id"} & set(state["metadata"])),
        "history_keys": sorted(history[0]),
        "history_newest_is_state": history[0]["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"],
        "history_chained": all(h["parent_checkpoint"]["checkpoint_id"] == p["checkpoint"]["checkpoint_id"] for h, p in zip(history, history[1:])),
        "history_sources": [h["metadata"]["source"] for h in history],
        "before": [h["checkpoint"]["checkpoint_id"] for h in older] == [h["checkpoint"]["checkpoint_id"] for h in history[2:4]],
    }


async def interrupt_flows(client, approve):
    thread = (await client.threads.create())["thread_id"]
    waited = await client.runs.wait(thread, approve, input={"request": "deploy"})
    paused = await client.threads.get_state(thread)
    status = (await client.threads.get(thread))["status"]
    resumed = await client.runs.wait(thread, approve, command={"resume": "yes"})
    task = paused["tasks"][0]
    return {
        "waited": {k: ([sorted(i) for i in v] if k == "__interrupt__" else v) for k, v in waited.items()},
        "interrupt_values": [i["value"] for i in waited.get("__interrupt__", [])],
        "next": paused["next"],
        "thread_status": status,
        "task_keys": sorted(task),
        "task": [task["name"], task["error"], [i["value"] for i in task["interrupts"]]],
        "interrupts_key": sorted(paused.get("interrupts") or {}) == [task["id"]] if "interrupts" in paused else None,
        "resumed": resumed,
        "after": (await client.threads.get(thread))["status"],
    }


async def sdk_flows(url, key, label, agent, slow, approve):
    client = get_client(url=url, api_key=key)
    suite = str(uuid.uuid4())
    thread = await client.threads.create(metadata={"suite": suite, "language": label})
    found = await client.threads.search(metadata={"suite": suite, "language": label})
    seen = {
        "thread": {"keys": sorted(thread), "status": thread["status"], "found": [t["thread_id"] for t in found] == [thread["thread_id"]]},
        "stream": await stream_flows(client, thread["thread_id"], agent),
    }
    run = await client.runs.create(thread["thread_id"], agent, input=user("joined"))
    joined = await client.runs.join(thread["thread_id"], run["run_id"])
    finished = await client.runs.get(thread["thread_id"], run["run_id"])
    seen["join"] = {"values": said(joined)[-2:], "status": finished["status"], "run_keys": sorted(finished)}
    seen["state"] = await state_flows(client, thread["thread_id"])
    seen["resume_stream"], seen["strategies"], seen["interrupt"] = await asyncio.gather(
        resumable(client, slow), strategies(client, slow), interrupt_flows(client, approve)
    )
    return seen


def remote_flows(url, key, agent, approve):
    remote = RemoteGraph(agent, url=url, api_key=key)
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    invoked = remote.invoke(user("remote"), config)
    updates = [list(chunk) for chunk in remote.stream(user("streamed"), config, stream_mode="updates")]
    state = remote.get_state(config)
    history = list(remote.get_state_history(config))
    asks = RemoteGraph(approve, url=url, api_key=key)
    paused_config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    paused = list(asks.stream({"request": "ship"}, paused_config, stream_mode="values"))
    resumed = asks.invoke(Command(resume="yes"), paused_config)
    return {
        "invoked": said(invoked),
        "updates": updates,
        "state": said(state.values),
        "state_next": list(state.next),
        "history_length": len(history),
        "history_newest_is_state": history[0].config["configurable"]["checkpoint_id"] == state.config["configurable"]["checkpoint_id"],
        "interrupted": [sorted(chunk) for chunk in paused],
        "resumed": resumed,
    }


def main():
    url, key, label, agent, slow, approve = sys.argv[1:7]
    seen = {"sdk": asyncio.run(sdk_flows(url, key, label, agent, slow, approve)), "remote": remote_flows(url, key, agent, approve)}
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
