"""A real HTTP server on a free local port that speaks the OpenAI Chat Completions and Gemini
`generateContent` wire formats, answering from a script of canned behaviours.

Each request pops the next behaviour for its API ("openai" or "gemini"): a JSON answer text,
an HTTP status, or a delay longer than the client's timeout. When a queue is empty, a `responder`
(if set) computes the behaviour from the request itself — a scripted model that reads its prompt,
for callers that ask many questions in an order the test cannot know; otherwise the answer is a
500. Every request body is recorded so tests can assert what left the process.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Behaviour:
    text: str | None = None  # the model's answer text
    status: int = 200
    delay_s: float = 0.0


@dataclass
class Recorded:
    api: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def prompt_of(api: str, body: dict[str, Any]) -> tuple[str, str]:
    """(system, first user message) of a recorded request in either wire format."""
    if api == "openai":
        messages = body.get("messages") or []
        system = next((m["content"] for m in messages if m.get("role") == "system"), "")
        user = next((m["content"] for m in messages if m.get("role") == "user"), "")
        return system, user
    system = " ".join(
        p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", [])
    )
    contents = body.get("contents") or [{}]
    return system, " ".join(p.get("text", "") for p in contents[0].get("parts", []))


def schema_name_of(api: str, body: dict[str, Any]) -> str | None:
    """The JSON schema's name an OpenAI request asks for (Gemini requests carry no name)."""
    if api != "openai":
        return None
    return ((body.get("response_format") or {}).get("json_schema") or {}).get("name")


Responder = Callable[[str, dict[str, Any]], Behaviour]


@dataclass
class FakeLLMServer:
    host: str = "127.0.0.1"
    port: int = 0
    script: dict[str, deque[Behaviour]] = field(default_factory=lambda: defaultdict(deque))
    requests: list[Recorded] = field(default_factory=list)
    responder: Responder | None = (
        None  # (api, request body) → behaviour, asked when the api's queue is empty
    )

    def __post_init__(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                api = "openai" if self.path.endswith("/chat/completions") else "gemini"
                owner.requests.append(
                    Recorded(
                        api,
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        json.loads(raw or b"{}"),
                    )
                )
                queue = owner.script[api]
                if queue:
                    behaviour = queue.popleft()
                elif owner.responder is not None:
                    try:
                        behaviour = owner.responder(api, owner.requests[-1].body)
                    except Exception as exc:  # noqa: BLE001 - a broken script is a 500 the test can see, not a hung client
                        behaviour = Behaviour(status=500, text=f"responder failed: {exc!r}")
                else:
                    behaviour = Behaviour(status=500)
                if behaviour.delay_s:
                    time.sleep(behaviour.delay_s)
                if behaviour.status != 200:
                    self._send(
                        behaviour.status,
                        {
                            "error": {
                                "code": behaviour.status,
                                "message": "scripted failure",
                                "status": "RESOURCE_EXHAUSTED"
                                if behaviour.status == 429
                                else "INTERNAL",
                            }
                        },
                    )
                    return
                self._send(200, owner._answer(api, behaviour.text or ""))

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self._server = ThreadingHTTPServer((self.host, self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _answer(self, api: str, text: str) -> dict[str, Any]:
        if api == "openai":
            return {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 0,
                "model": "fake",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": text, "refusal": None},
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": text}]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 1,
                "candidatesTokenCount": 1,
                "totalTokenCount": 2,
            },
            "modelVersion": "fake",
        }

    @property
    def openai_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def gemini_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def queue(self, api: str, *behaviours: Behaviour) -> None:
        self.script[api].extend(behaviours)

    def sent(self, api: str | None = None) -> list[Recorded]:
        return [r for r in self.requests if api is None or r.api == api]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
