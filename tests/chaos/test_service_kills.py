"""kill -9 of the researcher, then the critic, then the connector, during one burst of tasks.

The services run as separate processes (the e2e `stack`, ACK_WAIT_S=10 so a killed consumer's
unacked messages come back after 10 s). Each service is SIGKILLed while tasks are in flight —
no shutdown hook runs, nothing in flight is acked — and started again a moment later. Every
task must still end terminal (a decided claim, or the task failed with its reason) with at
most one claim per task and one verdict per claim: redelivery may repeat work, never results.
The time from each restart until the pipeline makes progress again is printed, not asserted.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import func, or_, select

from bench.harness.servers import Servers
from bench.harness.stack import DEMO_CORPUS, running_stack
from research_engine.stack import Stack
from research_ledger.tables import CriticVerdictRow, MemoryClaim, ResearchTask

pytestmark = [pytest.mark.chaos, pytest.mark.e2e, pytest.mark.timeout(180, func_only=True)]

API = "/api/research/v1"
BURST = 15
VICTIMS = ("researcher", "critic", "connector")
TERMINAL_CLAIM = ("active", "rejected", "superseded", "critic_quarantine")
PROGRESS_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def stack(servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """This module's own stack, stopped when the module ends (the e2e tests start theirs after)."""
    with running_stack(servers, tmp_path_factory) as running:
        yield running


async def _submit(stack: Stack, unique: str) -> list[uuid.UUID]:
    questions = json.loads((DEMO_CORPUS.parent / "questions.json").read_text())
    async with httpx.AsyncClient(
        base_url=stack.gateway_url, headers=stack.api_headers, timeout=30
    ) as client:
        ids = []
        for n in range(BURST):
            q = questions[n % len(questions)]["question"]
            body = {
                "question": f"{q} (chaos {unique} {n})",
                "entity": f"chaos-{unique}-{n % 5}",
                "tier": "batched",
            }
            reply = await client.post(f"{API}/tasks", json=body)
            assert reply.status_code == 202, reply.text
            ids.append(uuid.UUID(reply.json()["task_id"]))
    return ids


async def _progress(sessions, ids: list[uuid.UUID]) -> tuple[int, int]:
    """(claims or failures so far, tasks terminal so far)."""
    async with sessions() as session:
        claimed = await session.scalar(
            select(func.count()).select_from(MemoryClaim).where(MemoryClaim.task_id.in_(ids))
        )
        failed = await session.scalar(
            select(func.count())
            .select_from(ResearchTask)
            .where(ResearchTask.id.in_(ids), ResearchTask.status == "failed")
        )
        decided = await session.scalar(
            select(func.count())
            .select_from(MemoryClaim)
            .where(MemoryClaim.task_id.in_(ids), MemoryClaim.status.in_(TERMINAL_CLAIM))
        )
    return int(claimed) + int(failed), int(decided) + int(failed)


async def _until_progress(sessions, ids: list[uuid.UUID], since: tuple[int, int]) -> float:
    """Seconds until the pipeline moves past `since` (or everything is terminal already)."""
    started = time.monotonic()
    while time.monotonic() - started < PROGRESS_TIMEOUT_S:
        now = await _progress(sessions, ids)
        if now[1] >= len(ids) or now[0] > since[0] or now[1] > since[1]:
            break
        await asyncio.sleep(0.2)
    return time.monotonic() - started


async def test_kill_9_of_each_service_in_turn_loses_and_duplicates_nothing(
    stack: Stack, sessions, unique: str
) -> None:
    ids = await _submit(stack, unique)
    recovery: dict[str, float] = {}
    for n, name in enumerate(VICTIMS, start=1):
        target = n * BURST // (len(VICTIMS) + 2)  # spread the kills through the burst
        deadline = time.monotonic() + PROGRESS_TIMEOUT_S
        while (await _progress(sessions, ids))[0] < target and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        victim = stack.process(name)
        victim.kill()  # SIGKILL: no cleanup, whatever it holds is never acked
        victim.wait()
        before = await _progress(sessions, ids)
        stack.start_service(name)
        recovery[name] = await _until_progress(sessions, ids, before)
        print(
            f"\n{name} killed at {before} (claimed, terminal) of {BURST}; progress again {recovery[name]:.1f} s after restart"
        )

    deadline = time.monotonic() + 120
    while (await _progress(sessions, ids))[1] < BURST and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
    print(
        "\nrecovery after kill -9 + restart (s): "
        + ", ".join(f"{k}={v:.1f}" for k, v in recovery.items())
    )

    async with sessions() as session:
        claims = (
            await session.execute(
                select(MemoryClaim.task_id, func.count())
                .where(MemoryClaim.task_id.in_(ids))
                .group_by(MemoryClaim.task_id)
            )
        ).all()
        verdicts = (
            await session.execute(
                select(CriticVerdictRow.claim_id, func.count())
                .join(MemoryClaim, MemoryClaim.id == CriticVerdictRow.claim_id)
                .where(MemoryClaim.task_id.in_(ids))
                .group_by(CriticVerdictRow.claim_id)
            )
        ).all()
        unfinished = (
            await session.scalars(
                select(ResearchTask.id)
                .where(ResearchTask.id.in_(ids))
                .where(
                    ~or_(
                        ResearchTask.status == "failed",
                        ResearchTask.id.in_(
                            select(MemoryClaim.task_id).where(
                                MemoryClaim.status.in_(TERMINAL_CLAIM)
                            )
                        ),
                    )
                )
            )
        ).all()
        known = await session.scalar(
            select(func.count()).select_from(ResearchTask).where(ResearchTask.id.in_(ids))
        )
    assert known == BURST  # none lost before the ledger
    assert unfinished == []  # every task terminal: a decided claim, or failed with a reason
    assert all(count == 1 for _, count in claims), claims  # no task claimed twice
    assert all(count == 1 for _, count in verdicts), verdicts  # no claim judged twice
