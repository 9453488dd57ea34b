"""The repositories the gateway reads and writes through, on real PostgreSQL: api keys
(`uow.keys`), sign-ins (`uow.signins`), quota slots (`uow.submissions`), a key's own work
(`uow.work`) and the audit log as readers browse it (`uow.audit_log`)."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from research_contracts import RunResearch
from research_ledger import AuditAction, Ledger

pytestmark = pytest.mark.integration


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


async def _key(ledger: Ledger, unique: str, role: str = "researcher") -> uuid.UUID:
    key_id = uuid.uuid4()
    async with ledger.unit_of_work(service="gateway") as uow:
        await uow.keys.add(
            key_id, name=f"key {unique}", role=role, key_hash=_hash(f"{unique}{key_id}")
        )
    return key_id


async def test_a_key_is_found_by_its_hash_until_revoked_and_both_are_audited(
    sessions, unique: str
) -> None:
    ledger = Ledger(sessions)
    key_id = await _key(ledger, unique)
    async with ledger.unit_of_work(service="gateway") as uow:
        found = await uow.keys.live_by_hash(_hash(f"{unique}{key_id}"))
        assert found is not None and found.id == key_id
        assert await uow.keys.revoke(key_id) is True
        assert await uow.keys.revoke(key_id) is False  # already revoked: no second audit row
    async with ledger.reading() as uow:
        assert await uow.keys.live_by_hash(_hash(f"{unique}{key_id}")) is None
        assert (await uow.keys.get(key_id)) is not None  # revoked, still known
        actions = [e.action for e in await uow.audit_log.events(key_id=key_id)]
    assert actions == [AuditAction.ADMIN_KEY_REVOKED.value, AuditAction.ADMIN_KEY_CREATED.value]


async def test_a_key_names_default_until_bound_then_its_workspaces_sorted_once(
    sessions, unique: str
) -> None:
    ledger = Ledger(sessions)
    key_id = await _key(ledger, unique)
    async with ledger.unit_of_work(service="gateway") as uow:
        assert await uow.keys.workspaces(key_id) == ["default"]
        await uow.keys.bind_workspaces(key_id, ["zeta", "alpha", "zeta"])
    async with ledger.unit_of_work(service="gateway") as uow:
        assert await uow.keys.workspaces(key_id) == ["alpha", "zeta"]
        await uow.keys.bind_workspaces(key_id, ["beta"])  # replaces the earlier binding
        assert await uow.keys.workspaces(key_id) == ["beta"]


async def test_slots_count_in_flight_until_released_and_the_hour_until_cancelled(
    sessions, unique: str
) -> None:
    ledger = Ledger(sessions)
    key_id = await _key(ledger, unique)
    async with ledger.unit_of_work(service="gateway") as uow:
        await uow.submissions.lock(key_id)
        first = await uow.submissions.take(key_id, "pdf_export")
        second = await uow.submissions.take(key_id, "pdf_export")
        await uow.submissions.take(key_id, "review", subject_id=uuid.uuid4(), run_id="rv-1")
    async with ledger.unit_of_work(service="gateway") as uow:
        assert await uow.submissions.in_flight(key_id) == {"pdf_export": 2, "review": 1}
        await uow.submissions.release(first)  # a rendered PDF: free, still counted for the hour
        await uow.submissions.cancel(second)  # never went out: forgotten
    async with ledger.unit_of_work(service="gateway") as uow:
        assert await uow.submissions.in_flight(key_id) == {"review": 1}
        assert await uow.submissions.last_hour(key_id) == 2
        await uow.submissions.settle(key_id, run_timeout_s=0)  # every run is past a 0 s timeout
        assert await uow.submissions.in_flight(key_id) == {}


async def test_a_console_session_and_a_sign_in_code(sessions, unique: str) -> None:
    ledger = Ledger(sessions)
    key_id = await _key(ledger, unique)
    async with ledger.unit_of_work(service="gateway") as uow:
        session_id = await uow.signins.open(key_id, ttl_s=60)
        code = await uow.signins.issue_code(key_id, ttl_s=60)
    async with ledger.unit_of_work(service="gateway") as uow:
        found = await uow.signins.key_of(session_id)
        assert found is not None and found.id == key_id
        assert await uow.signins.spend_code(code) == key_id
        assert await uow.signins.spend_code(code) is None  # single use
        await uow.signins.close(session_id)
        assert await uow.signins.key_of(session_id) is None


async def test_failed_key_checks_wait_once_past_the_limit(sessions, unique: str) -> None:
    ledger = Ledger(sessions)
    source = f"client:{unique}"
    async with ledger.unit_of_work(service="gateway") as uow:
        for _ in range(3):
            assert await uow.signins.failure_wait(source, limit=3, window_s=60) is None
            await uow.signins.count_failure(source, window_s=60)
        assert 55 <= (await uow.signins.failure_wait(source, limit=3, window_s=60) or 0) <= 60
        assert await uow.signins.failure_wait(f"{source}-other", limit=3, window_s=60) is None


async def test_my_work_holds_the_keys_own_questions_its_text_taken_literally(
    sessions, unique: str
) -> None:
    ledger = Ledger(sessions)
    key_id = await _key(ledger, unique)
    async with ledger.unit_of_work(service="gateway") as uow:
        for question in (f"Does {unique} 100% help?", f"Does {unique} help?"):
            await uow.tasks.submit(RunResearch(question=question), owner_key_id=key_id)
        await uow.tasks.submit(RunResearch(question=f"Does {unique} 100% help others?"))  # nobody's
    async with ledger.reading() as uow:
        mine = await uow.work.questions(key_id)
        assert sorted(t.question for t in mine) == [
            f"Does {unique} 100% help?",
            f"Does {unique} help?",
        ]
        percent = await uow.work.questions(key_id, containing="100%")
        assert [t.question for t in percent] == [f"Does {unique} 100% help?"]
        assert await uow.work.questions(key_id, containing="10_%") == []  # `_` is no wildcard
