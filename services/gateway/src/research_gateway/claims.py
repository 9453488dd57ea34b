"""`GET /api/research/v1/claims`: browse the ledger's claims (the CLI's `claims list`, the console).

One claim by id stays in `tasks.py` (`GET /claims/{claim_id}`); this lists them newest first,
filtered by status and entity, each with its latest verdict (one query for the claims, one for
their verdicts).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from research_contracts import ClaimStatus
from research_contracts.views import ClaimView
from research_gateway.auth import AUTH_RESPONSES, require
from research_gateway.deps import API, Reading

router = APIRouter(
    prefix=API, tags=["ledger"], dependencies=[Depends(require("reader"))], responses=AUTH_RESPONSES
)


@router.get("/claims", response_model=list[ClaimView])
async def list_claims(
    uow: Reading,
    status: ClaimStatus | None = None,
    entity: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[ClaimView]:
    """Claims newest first; `status` and `entity` narrow the list."""
    return await uow.claim_views.listing(
        status=status.value if status is not None else None, entity=entity, limit=limit
    )
