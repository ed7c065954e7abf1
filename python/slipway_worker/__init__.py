"""The Python side of Slipway's agent server: it runs graph code only.

Everything else (HTTP, the run queue, streams, storage) stays in the TypeScript server,
which starts this worker and talks to it over a socket pair on fd 3; see
docs/python-protocol.md and docs/decisions/0036-python-graphs.md.
"""

PROTOCOL_VERSION = 1
WORKER_VERSION = "0.1.0"
