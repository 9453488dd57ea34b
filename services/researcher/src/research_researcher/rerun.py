"""The replicator's re-run (request/reply on `research.researcher.rerun`, queue group `researcher`).

An aged active claim is re-checked by gathering today's evidence for its original question.
The researcher answers `EvidenceRefreshed` with the hits and never writes to the ledger for
it; the replicator compares them to the claim's `supports[]`. The question goes through the
same privacy guard as a task's, so only a scientific topic reaches the connectors. Every
failure is an answer with `error` set, never a silent timeout for the requester.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

import structlog
from faststream.nats import NatsBroker

from research_contracts import EvidenceRefreshed
from research_platform.errors import PrepareError, TransientError
from research_platform.logging import get_logger
from research_platform.settings import ResearcherSettings
from research_researcher import evidence, prepare

log = get_logger(__name__)

UNKNOWN_CLAIM = uuid.UUID(int=0)


@dataclass
class EvidenceRefresher:
    """Answers re-run requests with fresh evidence from the connector service."""

    broker: NatsBroker
    settings: ResearcherSettings

    async def refresh(self, body: bytes) -> EvidenceRefreshed:
        """Fresh evidence for the request in `body`; `error` says why there is none."""
        try:
            request = prepare.prepare_rerun(body)
        except PrepareError as exc:
            return EvidenceRefreshed(claim_id=_claim_id_in(body), error=str(exc))
        with structlog.contextvars.bound_contextvars(claim_id=str(request.claim_id)):
            try:
                guarded = prepare.guard_question(request.question)
                found = await evidence.search(
                    self.broker,
                    guarded.topic_query,
                    sources=request.sources or self.settings.evidence_sources,
                    limit=request.limit,
                    timeout_s=self.settings.connector_timeout_s,
                )
            except (PrepareError, TransientError) as exc:
                log.warning("re-run found no evidence", error=str(exc))
                return EvidenceRefreshed(claim_id=request.claim_id, error=str(exc))
            log.info("re-run answered", hits=len(found.hits), degraded=sorted(found.degraded))
            return EvidenceRefreshed(claim_id=request.claim_id, hits=found.hits, degraded=found.degraded)


def _claim_id_in(body: bytes) -> uuid.UUID:
    """The claim id of a request that failed validation, when it can still be read."""
    try:
        return uuid.UUID(str(json.loads(body)["claim_id"]))
    except (ValueError, KeyError, TypeError):
        return UNKNOWN_CLAIM
