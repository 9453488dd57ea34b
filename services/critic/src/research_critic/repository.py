"""What the critic reads before it judges; its moves (decide, record_timeout, release, reconsider)
are the ledger's own (`Ledger.verdicts`, see `research_ledger.verdicts` for the ordering rules).

The critic reads in autocommit sessions: the transaction that writes re-checks what judging
assumed (`EntityChanged`), so nothing read here needs a transaction around it.
"""

from __future__ import annotations

import uuid

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from research_contracts import RecritiqueClaim
from research_corpus.sentence_vectors import SentenceVectors
from research_ledger import EntityChanged
from research_ledger.tables import Finding, MemoryClaim, ResearchSource
from research_platform.errors import TransientError
from research_platform.logging import get_logger

log = get_logger(__name__)

SERVICE = "critic"

__all__ = ["SERVICE", "ClaimReads", "EntityChanged", "FindingNotVisible"]


class FindingNotVisible(TransientError):
    """A re-critique names a replication finding this read cannot see yet: retried later (the
    message is dead-lettered with an audit row if it never appears, e.g. a rolled-back run)."""


class ClaimReads:
    """The claim under review, the stored vectors of its quotes, and the sources that no longer back it."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def claim(self, claim_id: uuid.UUID, *, settled: bool = False) -> MemoryClaim | None:
        """The claim; `settled` locks its row (primary only), waiting for an uncommitted change."""
        return await self.session.get(
            MemoryClaim, claim_id, with_for_update=settled, populate_existing=settled
        )

    async def quote_vectors(self, quotes: list[str]) -> dict[str, list[float]]:
        """The stored corpus vectors of `quotes` (one query), so the stance check embeds only the
        question; {} when the lookup fails — an optimisation, never a reason to fail the judgement.

        In an autocommit session a failed statement aborts nothing else (and a SAVEPOINT would
        itself fail); both flows read these vectors last."""
        if not quotes:
            return {}
        try:
            return await SentenceVectors(self.session).vectors_of(quotes)
        except Exception as exc:  # noqa: BLE001 - the classifier embeds the quotes itself instead
            log.warning(
                "quote vectors unavailable, the stance check embeds the quotes",
                error=repr(exc)[:300],
            )
            return {}

    async def discredited_sources(self, command: RecritiqueClaim, cited: list[str]) -> set[str]:
        """Cited sources that no longer back the claim: retracted in the ledger, or lost per the finding."""
        gone: set[str] = set()
        if cited:
            gone |= set(
                await self.session.scalars(
                    select(ResearchSource.source_id).where(
                        ResearchSource.source_id.in_(cited), ResearchSource.retracted
                    )
                )
            )
        if command.finding_id is not None:
            found = (
                await self.session.execute(
                    select(Finding.payload, Finding.expires_at > func.now()).where(
                        Finding.id == command.finding_id
                    )
                )
            ).one_or_none()
            if found is None:
                # The replicator publishes the command before it commits the finding (or a replica
                # lags): judging now would keep the claim on the sources the finding lost.
                raise FindingNotVisible(
                    f"replication finding {command.finding_id} is not visible yet"
                )
            payload, live = found
            if live and payload:
                gone |= set(payload.get("retracted") or []) | set(payload.get("lost") or [])
        return gone & set(cited)
