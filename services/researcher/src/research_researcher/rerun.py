"""The researcher's side of `research.researcher.rerun`: fresh evidence for an aged claim's question.

The replicator asks (request/reply, queue group `researcher`, `RerunResearch` →
`EvidenceRefreshed`); the researcher asks the connector service for evidence exactly as it
does for a new task — the question goes through the same privacy guard first, so only its
scientific topic reaches a connector — and answers with the hits. Nothing is written to the
ledger: comparing old and new evidence is the replicator's job. Every failure is an answer
with `error` set, never a silent timeout for the requester.

FastStream validates the request (`RerunResearch`); a request that fails validation is
answered by `refuse` (an `ExceptionMiddleware` on this router) with the reason, so the requester
never waits for a timeout. `router` is mounted by the researcher's `create_app`.
"""

from __future__ import annotations

import json
import uuid

import structlog
from faststream.middlewares import ExceptionMiddleware
from faststream.nats import NatsBroker, NatsMessage, NatsRouter

from research_contracts import EvidenceFound, EvidenceRefreshed, RerunResearch, subjects
from research_platform.delivery import invalid_reason
from research_platform.errors import PrepareError, TransientError
from research_platform.logging import get_logger
from research_researcher import evidence, prepare
from research_researcher.settings import ResearcherServiceSettings

log = get_logger(__name__)

UNREADABLE_CLAIM = uuid.UUID(int=0)


async def rerun(
    question: str,
    broker: NatsBroker,
    settings: ResearcherServiceSettings,
    *,
    sources: list[str] | None = None,
    limit: int | None = None,
) -> EvidenceFound:
    """Today's evidence on `question`, asked with its de-identified topic only.

    Raises `PrepareError` when no topic is left once identifiers are removed and
    `TransientError` when the connector service cannot answer.
    """
    guarded = prepare.guard_question(question)
    return await evidence.search(
        broker,
        guarded.topic_query,
        sources=sources or settings.researcher.evidence_sources,
        limit=limit or settings.researcher.evidence_limit,
        timeout_s=settings.researcher.connector_timeout_s,
    )


def router(broker: NatsBroker, settings: ResearcherServiceSettings) -> NatsRouter:
    """The `research.researcher.rerun` subscriber (queue group `researcher`), refusals included."""
    refusals = ExceptionMiddleware(publish_handlers={ValueError: refuse})
    rerun_router = NatsRouter(middlewares=[refusals])

    @rerun_router.subscriber(
        subjects.RESEARCHER_RERUN,
        queue=subjects.RESEARCHER_QUEUE,
        title="researcher.rerun",
        description="Request/reply: fresh evidence for an aged claim's question (RerunResearch → EvidenceRefreshed).",
    )
    async def on_rerun(request: RerunResearch) -> EvidenceRefreshed:
        """Answer the replicator's re-run with today's evidence; never writes to the ledger."""
        return await answer(request, broker, settings)

    return rerun_router


async def refuse(exc: ValueError, message: NatsMessage) -> EvidenceRefreshed:
    """The reply to a request that is not a valid `RerunResearch` (or not JSON at all)."""
    reason = invalid_reason(exc) or f"invalid re-run request: {type(exc).__name__}"
    log.warning("re-run request refused", reason=reason)
    return EvidenceRefreshed(
        claim_id=_claim_id_in(message.body),
        error=reason.replace("invalid message", "invalid re-run request"),
    )


async def answer(
    request: RerunResearch, broker: NatsBroker, settings: ResearcherServiceSettings
) -> EvidenceRefreshed:
    """The reply to one `RerunResearch` request; never raises (failures travel in `error`)."""
    with structlog.contextvars.bound_contextvars(claim_id=str(request.claim_id)):
        try:
            found = await rerun(
                request.question,
                broker,
                settings,
                sources=request.sources or None,
                limit=request.limit,
            )
        except (PrepareError, TransientError) as exc:
            log.warning("re-run found no evidence", error=str(exc))
            return EvidenceRefreshed(claim_id=request.claim_id, error=str(exc))
        except Exception as exc:  # noqa: BLE001 - the requester gets a reason instead of a timeout
            log.warning("re-run failed", error=repr(exc))
            return EvidenceRefreshed(
                claim_id=request.claim_id, error=f"re-run failed: {type(exc).__name__}"
            )
        log.info("re-run answered", hits=len(found.hits), degraded=sorted(found.degraded))
        return EvidenceRefreshed(
            claim_id=request.claim_id, hits=found.hits, degraded=found.degraded
        )


def _claim_id_in(body: bytes) -> uuid.UUID:
    """The claim id of a request that failed validation, when it can still be read."""
    try:
        return uuid.UUID(str(json.loads(body)["claim_id"]))
    except (ValueError, KeyError, TypeError):
        return UNREADABLE_CLAIM
