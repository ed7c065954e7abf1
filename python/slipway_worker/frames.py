"""Frames on the socket pair: a 4-byte big-endian length, then that many bytes of UTF-8 JSON."""

import asyncio
import json
import socket
import struct
from typing import Any

# A frame larger than this is a bug on one side, not data: stop instead of allocating it.
MAX_FRAME = 256 * 1024 * 1024


async def open_channel(fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    sock = socket.socket(fileno=fd)
    return await asyncio.open_unix_connection(sock=sock, limit=2**20)


async def read_frame(reader: asyncio.StreamReader) -> Any | None:
    """The next frame's object, or None once the other side has closed."""
    try:
        header = await reader.readexactly(4)
    except asyncio.IncompleteReadError:
        return None
    (length,) = struct.unpack(">I", header)
    if length > MAX_FRAME:
        raise ValueError(f"frame of {length} bytes is over the limit of {MAX_FRAME}")
    return json.loads(await reader.readexactly(length))


class FrameWriter:
    """Writes whole frames; one frame never interleaves with another."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._lock = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
        async with self._lock:
            self._writer.write(struct.pack(">I", len(body)) + body)
            await self._writer.drain()
