"""A local fake HTTP server for outside APIs (Tavily): a real socket on 127.0.0.1, scripted answers.

Runs `http.server` in a thread; every request is recorded (path, headers, JSON body) and answered
with the next scripted reply, or with the default reply once the script is used up.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = tuple[int, Any, dict[str, str]]


@dataclass
class FakeWeb:
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    script: list[Reply] = field(default_factory=list)
    default: Reply | Callable[[dict[str, Any]], Reply] = (200, {"results": []}, {})

    def reply(self, request: dict[str, Any]) -> Reply:
        if self.script:
            return self.script.pop(0)
        return self.default(request) if callable(self.default) else self.default


@contextmanager
def fake_web() -> Iterator[FakeWeb]:
    web = FakeWeb()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(size) if size else b""
            request = {
                "path": self.path,
                "headers": dict(self.headers),
                "json": json.loads(raw) if raw else None,
            }
            web.requests.append(request)
            status, body, headers = web.reply(request)
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    web.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield web
    finally:
        server.shutdown()
        server.server_close()
