"""What the critic reads before it judges, beyond the ledger's named reads (`uow.claims.get`,
`uow.verdicts.active_of_entity`, `uow.sources.retracted`, `uow.findings.discredited`); its
moves (decide, record_timeout, release, reconsider) are the ledger's own (`uow.verdicts`, see
`research_ledger.verdicts` for the ordering rules).

The critic reads in autocommit sessions (`Ledger.reading` over its read sessions): the
transaction that writes re-checks what judging assumed (`EntityChanged`), so nothing read here
needs a transaction around it.
"""

from __future__ import annotations

from research_contracts import RecritiqueClaim
from research_corpus.sentence_vectors import SentenceVectors
from research_ledger import EntityChanged, UnitOfWork
from research_platform.errors import TransientError
from research_platform.logging import get_logger

log = get_logger(__name__)

SERVICE = "critic"

__all__ = ["SERVICE", "EntityChanged", "FindingNotVisible", "discredited_sources", "quote_vectors"]


class FindingNotVisible(TransientError):
    """A re-critique names a replication finding this read cannot see yet: retried later (the
    message is dead-lettered with an audit row if it never appears, e.g. a rolled-back run)."""


async def quote_vectors(uow: UnitOfWork, quotes: list[str]) -> dict[str, list[float]]:
    """The stored corpus vectors of `quotes` (one query, in the unit of work's session), so the
    stance check embeds only the question; {} when the lookup fails — an optimisation, never a
    reason to fail the judgement.

    In an autocommit session a failed statement aborts nothing else (and a SAVEPOINT would
    itself fail); both flows read these vectors last."""
    if not quotes:
        return {}
    try:
        return await SentenceVectors(uow.session).vectors_of(quotes)
    except Exception as exc:  # noqa: BLE001 - the classifier embeds the quotes itself instead
        log.warning(
            "quote vectors unavailable, the stance check embeds the quotes",
            error=repr(exc)[:300],
        )
        return {}


async def discredited_sources(
    uow: UnitOfWork, command: RecritiqueClaim, cited: list[str]
) -> set[str]:
    """Cited sources that no longer back the claim: retracted in the ledger, or lost per the finding."""
    gone = await uow.sources.retracted(cited)
    if command.finding_id is not None:
        lost = await uow.findings.discredited(command.finding_id)
        if lost is None:
            # The replicator publishes the command before it commits the finding (or a replica
            # lags): judging now would keep the claim on the sources the finding lost.
            raise FindingNotVisible(f"replication finding {command.finding_id} is not visible yet")
        gone |= lost
    return gone & set(cited)
