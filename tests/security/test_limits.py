"""What a stranger, or one key, can make the gateway process hold: a body past the cap is a 413
before it is read (keyless 100 MB: within a second, the process's peak memory up by at most
20 MB), a keyless body is never read before its 401, and a long PDF export neither stalls the
event loop nor runs past its time cap. Against the real gateway process (`edge_gateway`)."""

from __future__ import annotations

import asyncio
import time
import uuid

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_engine.stack import Stack
from research_ledger import UnitOfWork
from research_reports import Report
from research_reports.model import Reference, Section
from tests.security.raw_http import memory_kib, send_and_read

pytestmark = pytest.mark.e2e
API = "/api/research/v1"
MB = 1024 * 1024


async def test_100_mb_without_a_key_is_413_within_a_second_and_is_never_held(
    edge_gateway: Stack,
) -> None:
    pid, port = edge_gateway.process("gateway").pid, edge_gateway.gateway_port
    peak_before = memory_kib(pid)
    answer = await send_and_read(
        port,
        "POST",
        f"{API}/tasks",
        {"Content-Type": "application/json"},
        body_bytes=100 * MB,
    )
    assert answer.status == 413 and answer.seconds < 1.0, answer
    grown_mb = (memory_kib(pid) - peak_before) / 1024
    assert grown_mb <= 20, f"the gateway's peak memory grew by {grown_mb:.0f} MB"


async def test_a_chunked_body_is_counted_as_it_streams_and_refused_past_the_cap(
    edge_gateway: Stack, api_keys: dict[str, dict[str, str]]
) -> None:
    """No `Content-Length` to read: with a valid key the body streams in and is cut at 1 MiB."""
    pid, port = edge_gateway.process("gateway").pid, edge_gateway.gateway_port
    peak_before = memory_kib(pid)
    answer = await send_and_read(
        port,
        "POST",
        f"{API}/tasks",
        {"Content-Type": "application/json", **api_keys["researcher"]},
        body_bytes=100 * MB,
        chunked=True,
    )
    assert answer.status == 413 and answer.seconds < 2.0, answer
    assert (memory_kib(pid) - peak_before) / 1024 <= 20


async def test_every_route_has_the_cap_the_sign_in_and_mcp_included(
    edge_gateway: Stack, api_keys: dict[str, dict[str, str]]
) -> None:
    port = edge_gateway.gateway_port
    for path, headers in (
        ("/sign-in", {"Content-Type": "application/x-www-form-urlencoded"}),
        ("/mcp", {"Content-Type": "application/json", **api_keys["admin"]}),
        (f"{API}/source-lists", {"Content-Type": "application/json", **api_keys["admin"]}),
    ):
        for chunked in (False, True):
            answer = await send_and_read(
                port, "POST", path, headers, body_bytes=2 * MB, chunked=chunked
            )
            assert answer.status == 413, (path, chunked, answer.head)
    async with httpx.AsyncClient(base_url=edge_gateway.gateway_url, timeout=30) as client:
        refused = await client.post(
            f"{API}/tasks", content=b"x" * (2 * MB), headers=api_keys["researcher"]
        )
        assert refused.status_code == 413
        assert refused.json()["detail"].startswith("the request body is larger than 1048576 bytes")
        # under the cap the route answers as ever (its own 422 here: no such JSON)
        fits = await client.post(
            f"{API}/tasks", content=b"x" * (MB - 1024), headers=api_keys["researcher"]
        )
        assert fits.status_code in (400, 422), fits.text


async def test_a_keyless_body_is_not_read_before_the_401(edge_gateway: Stack) -> None:
    """FastAPI reads a body before the route's key check: a stranger's half-sent body held the
    request open (the gateway waited for the rest) instead of a 401."""
    port = edge_gateway.gateway_port
    for chunked in (False, True):
        answer = await send_and_read(
            port,
            "POST",
            f"{API}/tasks",
            {"Content-Type": "application/json"},
            body_bytes=500_000,
            chunked=chunked,
            send_body=False,  # the head only: the body never comes
            timeout=5,
        )
        assert answer.status == 401 and answer.seconds < 2.0, (chunked, answer)


def _long_report() -> Report:
    """A report whose PDF takes seconds to render (sixty long sections, 300 references)."""
    body = " ".join(["Vitamin D supplementation reduced fractures in older adults [1]."] * 60)
    return Report(
        title="A long review",
        sections=[Section(title=f"Section {i}", body=body) for i in range(60)],
        references=[
            Reference(id=i + 1, title=f"Paper {i}", authors=["A B"], year=2020) for i in range(300)
        ],
    )


async def test_a_long_pdf_export_neither_stalls_the_gateway_nor_outlives_its_cap(
    edge_gateway: Stack,
    api_keys: dict[str, dict[str, str]],
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    report_id = uuid.uuid4()
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="test")
        run_id = f"rv-{report_id.hex}"
        await ledger.reports.open(
            report_id, kind="review", run_id=run_id, subject="vitamin D", subject_key="vitamin d"
        )
        await ledger.reports.save_version(
            report_id,
            run_id=run_id,
            content=_long_report().model_dump(mode="json"),
            markdown="# A long review",
        )
        await ledger.reports.complete(report_id)
    async with httpx.AsyncClient(base_url=edge_gateway.gateway_url, timeout=60) as client:
        exporting = asyncio.create_task(
            client.get(
                f"{API}/reports/{report_id}/export",
                params={"format": "pdf"},
                headers=api_keys["reader"],
            )
        )
        await asyncio.sleep(0.3)  # the render has begun
        started = time.monotonic()
        health = await client.get("/healthz")
        served_in = time.monotonic() - started
        exported = await exporting
    # The render shares the interpreter (the GIL), so the loop slows; it no longer stops (it waited
    # for the whole render, seconds).
    assert health.status_code == 200 and served_in < 2.0, f"/healthz waited {served_in:.2f} s"
    assert exported.status_code == 503, exported.status_code
    assert "took longer than 1 s" in exported.json()["detail"]
