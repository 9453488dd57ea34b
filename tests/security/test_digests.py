"""Digests nobody can reverse: an audit row's digest of a person's text and a task id derived from
an `Idempotency-Key` are HMACs under the installation secret (made at first start, kept out of
the database), so a short identifier (`MRN-00123456`) cannot be recovered by enumeration; and
migration 0016 keys the plain digests stored before, inside the audit log's append-only rule."""

from __future__ import annotations

import hashlib
import importlib.util
import stat
import uuid
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import SecretStr
from sqlalchemy import insert, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from research_gateway.auth import ApiKeys
from research_ledger import AuditAction, UnitOfWork
from research_ledger.deidentified import keyed_digest
from research_ledger.tables import AuditEvent
from research_platform import installation
from research_platform.settings import Settings
from research_privacy.boundary import digest as plain_digest
from tests.conftest import REPO
from tests.keys import auth
from tests.security.conftest import Gateway

API = "/api/research/v1"
OLD_IDEMPOTENCY_NAMESPACE = uuid.UUID("5b0c3f52-9a7e-4f0e-9d1c-1f6a2f1e7c11")


def _migration() -> ModuleType:
    path = REPO / "migrations" / "versions" / "0016_keyed_audit_digests.py"
    spec = importlib.util.spec_from_file_location("migration_0016", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.unit
def test_the_installation_secret_is_made_once_private_and_then_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("INSTALLATION_SECRET", raising=False)
    settings = Settings(data_dir=tmp_path)
    made = installation.installation_secret(settings)
    path = tmp_path / installation.SECRET_FILE
    assert len(made) >= 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert installation.installation_secret(settings) == made  # kept, not made again
    configured = Settings(data_dir=tmp_path, installation_secret=SecretStr("s" * 40))
    assert installation.installation_secret(configured) == b"s" * 40


@pytest.mark.integration
async def test_an_idempotency_key_cannot_be_recovered_from_the_audit_row_or_the_task_id(
    gateway: Gateway, sessions: async_sessionmaker[AsyncSession]
) -> None:
    async with sessions() as session, session.begin():
        _, key = await ApiKeys(UnitOfWork(session, service="gateway")).issue(
            "researcher", "digests"
        )
    idempotency_key = f"MRN-{uuid.uuid4().int % 10**8:08d}"
    async with gateway() as (_, client):
        answer = await client.post(
            f"{API}/tasks",
            json={"question": "Does vitamin D reduce fracture risk in older adults?"},
            headers={**auth(key), "Idempotency-Key": idempotency_key},
        )
    assert answer.status_code == 202, answer.text
    task_id = uuid.UUID(answer.json()["task_id"])
    # Anyone could compute these two from a guess: neither may be what a reader sees.
    assert task_id != uuid.uuid5(OLD_IDEMPOTENCY_NAMESPACE, idempotency_key)
    async with sessions() as session:
        stored = await session.scalar(
            select(AuditEvent.payload["idempotency_key"].astext).where(
                AuditEvent.task_id == task_id,
                AuditEvent.action == AuditAction.TASK_SUBMITTED.value,
            )
        )
    assert stored is not None and stored != plain_digest(idempotency_key)
    assert (
        stored.startswith("hmac:")
        and hashlib.sha256(idempotency_key.encode()).hexdigest()[:16] not in stored
    )
    assert stored == keyed_digest(plain_digest(idempotency_key), installation.current())


@pytest.mark.integration
async def test_migration_0016_keys_the_plain_digests_within_the_append_only_rule(
    engine: AsyncEngine,
) -> None:
    plain = plain_digest(f"MRN-{uuid.uuid4().int % 10**8:08d}")
    async with engine.begin() as conn:
        row_id = await conn.scalar(
            insert(AuditEvent)
            .values(
                service="test",
                action=AuditAction.TASK_SUBMITTED.value,
                subject_ids={},
                payload={"tier": "standard", "idempotency_key": plain},
            )
            .returning(AuditEvent.id)
        )
    secret = b"migration-test-secret-0123456789"
    async with engine.begin() as conn:
        rewritten = await conn.run_sync(lambda sync: _migration().rekey(sync, secret))
    assert rewritten >= 1
    async with engine.connect() as conn:
        stored = await conn.scalar(select(AuditEvent.payload).where(AuditEvent.id == row_id))
    assert stored == {"tier": "standard", "idempotency_key": keyed_digest(plain, secret)}
    with pytest.raises(DBAPIError):  # the trigger is back: the log is append-only again
        async with engine.begin() as conn:
            await conn.execute(
                text("UPDATE audit_events SET service = 'x' WHERE id = :id"), {"id": row_id}
            )
