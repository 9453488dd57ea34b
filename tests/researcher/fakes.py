"""Local stand-ins for the researcher's outbound peers, on real transports.

`FakeConnector` answers `research.connector.search` on the real NATS server (queue group
`connector`) and records every request body; `FakeOpenAI` is an HTTP server speaking the
OpenAI Chat Completions wire format and records every request body. Tests assert on what
left the process through them.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import nats
from nats.aio.msg import Msg

from research_contracts import EvidenceFound, SearchEvidence, SourceHit, subjects

EVIDENCE = [
    SourceHit(
        source_id="corpus:rs-denosumab-1",
        source="corpus",
        title="Denosumab for fracture prevention in postmenopausal women with osteoporosis",
        year=2009,
        abstract=(
            "Denosumab reduced the risk of new radiographic vertebral fractures by 68% in postmenopausal women "
            "with osteoporosis. Hip fractures were reduced by 40%. Adverse events did not differ between groups."
        ),
    ),
    SourceHit(
        source_id="pmid:rs-000002",
        source="pubmed",
        title="Long-term denosumab treatment and bone mineral density",
        year=2017,
        abstract=(
            "Ten years of denosumab treatment kept vertebral fracture rates low and increased bone mineral density. "
            "Denosumab was well tolerated in older women."
        ),
    ),
    SourceHit(
        source_id="corpus:rs-unrelated-3",
        source="corpus",
        title="Coffee consumption and sleep quality",
        year=2015,
        abstract="Evening coffee consumption shortened total sleep time in healthy adults.",
    ),
]


@dataclass
class FakeConnector:
    """Answers evidence searches with `hits_for(request)` after `delay_for(request)` seconds."""

    hits_for: Callable[[SearchEvidence], list[SourceHit]] = lambda _request: list(EVIDENCE)
    delay_for: Callable[[SearchEvidence], float] = lambda _request: 0.0
    raw: list[bytes] = field(default_factory=list)
    _sub: Any = None
    _tasks: set[asyncio.Task] = field(default_factory=set)

    @property
    def requests(self) -> list[SearchEvidence]:
        return [SearchEvidence.model_validate_json(body) for body in self.raw]

    async def start(self, nc: nats.NATS) -> None:
        self._sub = await nc.subscribe(
            subjects.CONNECTOR_SEARCH, queue=subjects.CONNECTOR_QUEUE, cb=self._on
        )

    async def stop(self) -> None:
        if self._sub is not None:
            await self._sub.unsubscribe()
        for task in list(self._tasks):
            task.cancel()

    async def _on(self, msg: Msg) -> None:
        self.raw.append(msg.data)
        task = asyncio.create_task(
            self._answer(msg)
        )  # answer requests concurrently, like the real service
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, msg: Msg) -> None:
        request = SearchEvidence.model_validate_json(msg.data)
        delay = self.delay_for(request)
        if delay:
            await asyncio.sleep(delay)
        reply = EvidenceFound(hits=self.hits_for(request))
        await msg.respond(reply.model_dump_json().encode())


@dataclass
class Reply:
    """One scripted answer: the assistant's text, or an HTTP error status, after a delay."""

    text: str = ""
    status: int = 200
    delay_s: float = 0.0


class FakeOpenAI:
    """`POST /v1/chat/completions` on a free local port, answering from a script (then 500)."""

    def __init__(self) -> None:
        self.script: deque[Reply] = deque()
        self.bodies: list[bytes] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.bodies.append(raw)
                reply = owner.script.popleft() if owner.script else Reply(status=500)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.status != 200:
                    body: dict[str, Any] = {
                        "error": {
                            "message": "scripted failure",
                            "type": "server_error",
                            "code": reply.status,
                        }
                    }
                else:
                    body = {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "gpt-test",
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {
                                    "role": "assistant",
                                    "content": reply.text,
                                    "refusal": None,
                                },
                            }
                        ],
                    }
                data = json.dumps(body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def queue(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def prompts(self) -> list[str]:
        """Every message content sent, decoded from the recorded request bodies."""
        return [m["content"] for raw in self.bodies for m in json.loads(raw)["messages"]]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
