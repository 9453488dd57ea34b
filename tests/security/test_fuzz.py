"""Schemathesis over the gateway's whole OpenAPI document, authenticated with an admin key, against
the gateway process with the connector, the critic and the periodic agents on the session's real
NATS + Postgres, with every check (`--checks all`): no 5xx, every status and content type
documented, every schema-violating request refused, every schema-valid one accepted (the one
cross-field rule JSON Schema cannot state is in `fuzz_hooks.py`), responses match their schemas,
auth enforced (`ignored_auth`), and the stateful phase follows the document's links
(POST /tasks → GET /tasks/{task_id}, …).

Bounded (examples per operation, a fixed seed) so it runs in a few minutes; `FUZZ_EXAMPLES` raises
it for a deeper run. The event streams are fuzzed too: here each ends after a second
(`GATEWAY_EDGE__STREAM_MAX_S`, as every stream does after its lifetime), so the fuzzer reads
a whole one and checks its events against the document.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from subprocess import PIPE

import pytest

from bench.harness.servers import Servers
from research_engine.stack import Stack
from research_platform.embedded import free_port

pytestmark = pytest.mark.e2e

# The agents answer the admin verbs (a missing agent is a documented 503, but a 5xx all the same).
SERVICES = ("connector", "critic", "correlator", "replicator", "librarian", "gateway")
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "10"))
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fuzzed_stack(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = Stack(
        tmp_path_factory.mktemp("fuzz"),
        gateway_port=free_port(),
        services=SERVICES,
        nats_url=servers.nats_url,
        database_url=servers.database_url,
        # `ignored_auth` sends a keyless and a bad-key probe for every operation, all from 127.0.0.1: with
        # the default throttle they would soon be answered 429 (tests/security/test_auth.py), which the
        # check does not count as a refusal. The fuzzer's valid key is never throttled either way.
        extra_env={"GATEWAY_AUTH__FAILED_ATTEMPTS": "1000000", "GATEWAY_EDGE__STREAM_MAX_S": "1"},
    )
    running.start_servers()
    running.start_services()
    try:
        running.wait_ready(timeout=180)
        yield running
    finally:
        running.stop()


async def test_schemathesis_finds_nothing(fuzzed_stack: Stack, tmp_path: Path) -> None:
    st = Path(sys.executable).with_name("st")
    command = [
        str(st),
        "run",
        f"{fuzzed_stack.gateway_url}/openapi.json",
        "--header",
        f"X-API-Key: {fuzzed_stack.admin_key}",
        "--checks",
        "all",
        "--phases",
        "examples,coverage,fuzzing,stateful",
        "--max-examples",
        str(EXAMPLES),
        "--seed",
        "20261122",
        # One worker: with two, Hypothesis parses lambda sources (`ast.parse`) in two threads at
        # once and CPython 3.11 can raise "SystemError: AST constructor recursion depth mismatch"
        # (python/cpython#106905) — an error of the fuzzer, reported against GET /claims.
        "--workers",
        "1",
        "--request-timeout",
        "60",
        "--report",
        "junit",
        "--report-dir",
        str(tmp_path),
    ]
    # The one rule JSON Schema cannot state (a source list's dates in order) is told to the fuzzer.
    env = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "tests.security.fuzz_hooks",
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    # Awaited, not run blocking: the session's event loop keeps serving while schemathesis runs, so
    # nothing this process holds on the bus can sit on a request the gateway is waiting for.
    run = await asyncio.create_subprocess_exec(
        *command, stdout=PIPE, stderr=PIPE, cwd=tmp_path, env=env
    )
    out, err = await asyncio.wait_for(run.communicate(), timeout=900)
    stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
    summary = stdout[stdout.find("=== FAILURES") :] if "=== FAILURES" in stdout else stdout[-6000:]
    assert run.returncode == 0, f"schemathesis found problems:\n{summary[:30000]}\n{stderr[-2000:]}"
    # Every generated case passed every check (warnings such as "missing test data: 404s for random
    # ids" are printed but are not findings).
    assert re.search(r"(\d+) generated, \1 passed", stdout), stdout[-3000:]
    # A throttled request shows as status 429; matched as a word, so a port such as 15429 in the
    # printed base URL is not read as one.
    assert "rate limit" not in stdout.lower() and not re.search(r"\b429\b", summary), summary[:3000]
