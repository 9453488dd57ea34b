"""The real gateway app served by uvicorn on a free port (real NATS + Postgres), for the client
and the CLI, and ledger rows to read through it (written by `research_ledger`, as the services do)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import uvicorn

from bench.harness.servers import Servers
from research_contracts import RunResearch, Support
from research_gateway.main import create_app
from research_ledger import UnitOfWork
from research_ledger.claims import ClaimProposal
from research_platform.embedded import free_port
from research_platform.settings import GatewayAuthSettings, Settings
from research_reports import Finding, Reference, Report, Section
from tests.keys import api_key


@pytest.fixture(scope="module")
def gateway(servers: Servers) -> Iterator[str]:
    """The gateway's base URL (uvicorn in a thread with its own event loop, lifespan on)."""
    settings = Settings(
        nats_url=servers.nats_url,
        database_url=servers.database_url,
        _env_file=None,
        gateway_auth=GatewayAuthSettings(failed_attempts=1000),
    )
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings), host="127.0.0.1", port=free_port(), log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(600):
        if server.started:
            break
        time.sleep(0.05)
    assert server.started, "the gateway did not start"
    yield f"http://127.0.0.1:{server.config.port}"
    server.should_exit = True
    thread.join(15)


@pytest.fixture
async def keys(sessions) -> dict[str, str]:
    """role → a fresh live key."""
    return {role: await api_key(sessions, role) for role in ("reader", "researcher", "admin")}


@pytest.fixture
async def decided_claim(sessions, unique) -> uuid.UUID:
    """A task and its pending claim, stored through the ledger like the researcher does."""
    task = RunResearch(
        question=f"Does vitamin D prevent fractures {unique}?", entity=f"vitamin-d-{unique}"
    )
    claim_id = uuid.uuid4()
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="researcher")
        await ledger.tasks.submit(task)
        await ledger.claims.propose(
            ClaimProposal(
                claim_id=claim_id,
                task_id=task.task_id,
                entity=f"vitamin-d-{unique}",
                question=task.question,
                statement="Daily vitamin D reduced hip fractures in older adults.",
                confidence=0.7,
                supports=[
                    Support(
                        source_id="corpus:1",
                        title="Vitamin D trial",
                        quote="reduced hip fractures",
                        locator="s1",
                    )
                ],
                dropped_supports=0,
                model="offline:test",
                decay_at=datetime.now(UTC) + timedelta(days=365),
            ),
            None,
            [],
        )
    return claim_id


@pytest.fixture
async def report_id(sessions, unique) -> uuid.UUID:
    """A completed review report with one cited finding, stored through the ledger."""
    report = Report(
        title=f"Vitamin D and fractures {unique}",
        sections=[
            Section(
                title="Key findings",
                findings=[
                    Finding(
                        statement="Vitamin D reduced hip fractures [1].",
                        tag="SUPPORTED",
                        citations=[1],
                    )
                ],
            )
        ],
        references=[
            Reference(
                id=1,
                paper_id="doi:10.1000/vitd",
                title="Vitamin D trial",
                authors=["Roe, Jane"],
                year=2020,
                doi="10.1000/vitd",
            )
        ],
    )
    found = uuid.uuid4()
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="reviewer")
        await ledger.reports.open(
            found,
            kind="review",
            run_id=f"rv-{unique}",
            subject=report.title,
            subject_key="vitamin-d",
        )
        await ledger.reports.save_version(
            found,
            run_id=f"rv-{unique}",
            content=report.model_dump(mode="json"),
            markdown=report.render_markdown(),
        )
        await ledger.reports.complete(found, outcome="PASS")
    return found
