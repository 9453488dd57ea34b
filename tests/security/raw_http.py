"""HTTP/1.1 by hand, for what an HTTP client library will not do: read the answer while the body
is still being sent (or never sent at all), and measure the gateway process's memory."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from pathlib import Path

CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Answer:
    status: int
    head: str
    seconds: float  # from the first byte sent to the status line read


def memory_kib(pid: int, field: str = "VmHWM") -> int:
    """A memory figure of process `pid` in KiB: `VmHWM` (peak resident set) or `VmRSS`."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise LookupError(f"{field} not in /proc/{pid}/status")


async def send_and_read(
    port: int,
    method: str,
    path: str,
    headers: dict[str, str],
    *,
    body_bytes: int = 0,
    chunked: bool = False,
    send_body: bool = True,
    timeout: float = 10.0,
) -> Answer:
    """Send the request head, then (unless `send_body` is False) `body_bytes` of body — with a
    `Content-Length`, or chunked — while reading the answer's status line as soon as it comes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {body_bytes}")
    started = time.monotonic()
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())

    async def body() -> None:
        sent = 0
        block = b"x" * CHUNK
        while send_body and sent < body_bytes:
            piece = block[: min(CHUNK, body_bytes - sent)]
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if chunked else piece)
            await writer.drain()
            sent += len(piece)
        if send_body and chunked:
            writer.write(b"0\r\n\r\n")
            await writer.drain()

    sending = asyncio.create_task(body())
    try:
        head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)).decode()
        seconds = time.monotonic() - started
    finally:
        sending.cancel()
        with contextlib.suppress(BaseException):
            await sending
        writer.close()
        with contextlib.suppress(BaseException):
            await writer.wait_closed()
    return Answer(int(head.split(" ", 2)[1]), head, seconds)
