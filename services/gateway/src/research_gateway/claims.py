"""`GET /api/research/v1/claims`: browse the ledger's claims (the CLI's `claims list`, the console).

One claim by id stays in `tasks.py` (`GET /claims/{claim_id}`); this lists them newest first,
filtered by status and entity, each with its latest verdict (one query for the claims, one for
their verdicts).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import distinct_on

from research_contracts import ClaimStatus, Support
from research_contracts.views import ClaimView, VerdictView
from research_gateway.auth import AUTH_RESPONSES, require
from research_gateway.deps import API, ReadSession
from research_ledger.tables import CriticVerdictRow, MemoryClaim

router = APIRouter(
    prefix=API, tags=["ledger"], dependencies=[Depends(require("reader"))], responses=AUTH_RESPONSES
)


@router.get("/claims", response_model=list[ClaimView])
async def list_claims(
    session: ReadSession,
    status: ClaimStatus | None = None,
    entity: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[ClaimView]:
    """Claims newest first; `status` and `entity` narrow the list."""
    query = select(MemoryClaim)
    if status is not None:
        query = query.where(MemoryClaim.status == status.value)
    if entity:
        query = query.where(MemoryClaim.entity == entity)
    claims = list(
        await session.scalars(
            query.order_by(MemoryClaim.created_at.desc(), MemoryClaim.id).limit(limit)
        )
    )
    latest = (
        select(CriticVerdictRow)
        .where(CriticVerdictRow.claim_id.in_([c.id for c in claims]))
        .ext(distinct_on(CriticVerdictRow.claim_id))
        .order_by(
            CriticVerdictRow.claim_id,
            CriticVerdictRow.created_at.desc(),
            CriticVerdictRow.id.desc(),
        )
    )
    verdicts = {v.claim_id: v for v in await session.scalars(latest)} if claims else {}
    return [
        ClaimView(
            claim_id=c.id,
            task_id=c.task_id,
            entity=c.entity,
            question=c.question,
            statement=c.statement,
            status=c.status,
            confidence=c.confidence,
            supports=[Support.model_validate(s) for s in c.supports],
            supersedes=list(c.supersedes or []),
            superseded_by=c.superseded_by,
            model=c.model,
            created_at=c.created_at,
            decided_at=c.decided_at,
            verdict=VerdictView(
                verdict=v.verdict,
                score=v.score,
                reasoning=v.reasoning,
                model=v.model,
                decided_at=v.created_at,
            )
            if (v := verdicts.get(c.id))
            else None,
        )
        for c in claims
    ]
