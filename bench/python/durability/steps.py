"""The graph of bench/python-durability.ts: four nodes one after another, so a run saves a
checkpoint per step (five with its input) and a step's writes before each."""

import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict, total=False):
    text: str
    trail: Annotated[list[str], operator.add]


def step(name: str):
    async def node(state: State) -> State:
        return {"trail": [f"{name}:{len(state.get('trail') or [])}"]}

    return node


NODES = ["plan", "act", "check", "answer"]
builder = StateGraph(State)
for name in NODES:
    builder.add_node(name, step(name))
for before, after in zip([START, *NODES], [*NODES, END]):
    builder.add_edge(before, after)
graph = builder.compile()
