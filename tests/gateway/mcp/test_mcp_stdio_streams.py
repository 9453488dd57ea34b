"""The real `research-engine mcp` process, read stream by stream: stdout carries JSON-RPC only, the
logs on stderr are structured and hold no person's text (a tool's unexpected failure included),
the key's source is said, and a key is never sent where it would be given away. The gateway here
is a tiny local server answering HTML to everything, so a tool fails in a way nobody planned."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e
COMMAND = [sys.executable, "-m", "research_engine.cli", "mcp"]
KEY = "rek_stdio-streams-test-key-0123456789abcdef"
PATIENT = "Johanna Pemberton-Quayle"
MRN = "MRN 48213377"


class _HtmlGateway(BaseHTTPRequestHandler):
    def _html(self) -> None:
        if self.headers.get("content-length"):
            self.rfile.read(int(self.headers["content-length"]))
        body = b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _html

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def html_gateway() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HtmlGateway)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def _env(tmp_path: Path, key: str | None = KEY) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("RESEARCH_API_KEY", "RESEARCH_URL", "LOG_JSON", "LOG_LEVEL")
    }
    env.update({"RESEARCH_CONFIG": str(tmp_path / "none.toml"), "DATA_DIR": str(tmp_path)})
    if key:
        env["RESEARCH_API_KEY"] = key
    return env


def _rpc(id_: int | None, method: str, params: dict[str, object]) -> str:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id_ is not None:
        message["id"] = id_
    return json.dumps(message) + "\n"


def test_a_tool_that_fails_unexpectedly_leaves_stdout_json_rpc_and_both_streams_free_of_the_patient(
    html_gateway: str, tmp_path: Path
) -> None:
    question = f"Did {PATIENT} ({MRN}) respond to aspirin after her stroke?"
    script = "".join(
        [
            _rpc(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"},
                },
            ),
            _rpc(None, "notifications/initialized", {}),
            _rpc(
                2,
                "tools/call",
                {"name": "ask_question", "arguments": {"question": question, "wait_seconds": 0}},
            ),
            _rpc(
                3,
                "tools/call",
                {"name": "search_ledger", "arguments": {"text": PATIENT, "entity": PATIENT}},
            ),
        ]
    )
    process = subprocess.Popen(
        [*COMMAND, "--url", html_gateway],
        env=_env(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(script)
    process.stdin.flush()
    answers: dict[int, dict[str, Any]] = {}
    lines: list[str] = []
    while len(answers) < 3:  # initialize and the two calls answered
        line = process.stdout.readline()
        assert line, (
            f"stdout closed early; stderr: {process.stderr.read() if process.stderr else ''}"
        )
        lines.append(line)
        message = json.loads(line)
        if "id" in message and ("result" in message or "error" in message):
            answers[message["id"]] = message
    out, err = process.communicate(timeout=60)  # stdin closed: the server ends
    lines += out.splitlines()

    for line in filter(str.strip, lines):  # stdout: JSON-RPC messages and nothing else
        assert json.loads(line)["jsonrpc"] == "2.0", line
    failed = answers[2]["result"]
    assert failed["isError"] and "internal error in ask_question" in failed["content"][0]["text"]
    records = [
        json.loads(line) for line in err.splitlines() if line.strip()
    ]  # stderr: structured records only
    # both calls meet the HTML page; the server answers them concurrently, so either may log first
    crashes = {r["tool"]: r for r in records if r["event"] == "mcp.tool_failed"}
    crash = crashes["ask_question"]
    assert crash["error"] == "JSONDecodeError" and crash["frames"]
    serving = next(r for r in records if r["event"] == "mcp.serving")
    assert serving["key_from"] == "RESEARCH_API_KEY" and serving["gateway"] == html_gateway
    for stream in ("".join(lines), err):
        for identifier in ("Johanna", "Pemberton", "48213377", KEY):
            assert identifier not in stream, (identifier, stream[-3000:])


@pytest.mark.parametrize(
    ("url", "with_key", "reason"),
    [
        (
            "http://gateway.example.org:8080",
            True,
            "plain http",
        ),  # the key would cross the network in clear
        ("http://10.1.2.3:8080", True, "plain http"),
        (
            "https://gateway.example.org",
            False,
            "local admin key",
        ),  # this machine's admin key, sent elsewhere
        ("ftp://127.0.0.1", True, "http(s)"),
    ],
)
def test_a_key_is_never_sent_where_it_would_be_given_away(
    url: str, with_key: bool, reason: str, tmp_path: Path
) -> None:
    (tmp_path / "admin.key").write_text("rek_local-admin-key-of-this-machine\n")
    result = subprocess.run(
        [*COMMAND, "--url", url],
        env=_env(tmp_path, KEY if with_key else None),
        check=False,
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and reason in result.stderr and result.stdout == ""
    assert "rek_" not in result.stderr
