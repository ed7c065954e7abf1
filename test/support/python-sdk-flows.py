"""What the official Python SDK and RemoteGraph see of a server, as one JSON object.

Usage: python python-sdk-flows.py URL API_KEY GRAPH [GRAPH ...]
Each echo GRAPH answers the last message with "You said: <text>"; "py_approve" must be
served too (an interrupt and its resume). The test asserts on the printed object.
"""

import asyncio
import json
import sys
import uuid

import httpx
from langgraph.pregel.remote import RemoteGraph
from langgraph_sdk import get_client
from sdk_values import said, user  # beside this script, so on its sys.path


async def sdk_flows(url, key, graphs):
    client = get_client(url=url, api_key=key)
    seen = {"graph_ids": sorted({a["graph_id"] for a in await client.assistants.search(limit=100)})}
    for graph in graphs:
        thread = (await client.threads.create())["thread_id"]
        waited = await client.runs.wait(thread, graph, input=user("hi"))
        events = [part.event async for part in client.runs.stream(thread, graph, input=user("again"), stream_mode=["values", "updates"])]
        run = await client.runs.create(thread, graph, input=user("queued"), metadata={"from": "python"})
        await client.runs.join(thread, run["run_id"])
        finished = await client.runs.get(thread, run["run_id"])
        state = await client.threads.get_state(thread)
        history = await client.threads.get_history(thread, limit=100)
        stateless = await client.runs.wait(None, graph, input=user("stateless"))
        # join_stream without a stream_mode sends `stream_mode=`: every mode, as on the vendor's server.
        resumable = await client.runs.create(thread, graph, input=user("replayed"), stream_resumable=True)
        replayed = [part.event async for part in client.runs.join_stream(thread, resumable["run_id"], last_event_id="-1")]
        seen[graph] = {
            "waited": said(waited),
            "events": sorted(set(events)),
            "run": {"status": finished["status"], "metadata_from": finished["metadata"].get("from")},
            "state": said(state["values"]),
            "next": state["next"],
            "history_newest_is_state": history[0]["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"],
            "history_length": len(history),
            "stateless": said(stateless),
            "replayed": sorted(set(replayed)),
        }

    thread = (await client.threads.create())["thread_id"]
    await client.runs.wait(thread, "py_approve", input={"request": "deploy"})
    paused = await client.threads.get_state(thread)
    resumed = await client.runs.wait(thread, "py_approve", command={"resume": "yes"})
    seen["approve"] = {
        "next": paused["next"],
        "interrupts": [i["value"] for task in paused["tasks"] for i in task["interrupts"]],
        "resumed": resumed,
    }

    try:
        await client.threads.get(str(uuid.uuid4()))
        seen["missing_thread"] = 200
    except httpx.HTTPStatusError as error:
        seen["missing_thread"] = error.response.status_code
    return seen


def remote_flows(url, key, graphs):
    seen = {}
    for graph in graphs:
        remote = RemoteGraph(graph, url=url, api_key=key)
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        invoked = remote.invoke(user("remote"), config)
        updates = [list(chunk.keys()) for chunk in remote.stream(user("streamed"), config, stream_mode="updates")]
        state = remote.get_state(config)
        seen[graph] = {
            "stateless": said(remote.invoke(user("alone"))),
            "invoked": said(invoked),
            "updates": updates,
            "state": said(state.values),
            "history_length": len(list(remote.get_state_history(config))),
        }
    return seen


def main():
    url, key, graphs = sys.argv[1], sys.argv[2], sys.argv[3:]
    seen = {"sdk": asyncio.run(sdk_flows(url, key, graphs)), "remote": remote_flows(url, key, graphs)}
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
