"""`GET /search`: hybrid / lexical / dense search over the local corpus, served by the connector.

The query is free text a person typed: it passes the privacy boundary (`person_text`) before it
goes on the bus, like every other free text, and the answer names the query that was searched.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, status
from fastapi.exceptions import RequestValidationError
from nats.errors import NoRespondersError

from research_contracts import EvidenceFound, SearchEvidence, subjects
from research_contracts.reviews import deidentified_within
from research_contracts.views import SearchResults
from research_gateway.auth import AUTH_RESPONSES, require
from research_gateway.deps import API, Broker
from research_gateway.storable import STORABLE, TEXT_QUERY

QUERY_MAX_CHARS = 1000  # = SearchEvidence.query's
router = APIRouter(
    prefix=API, tags=["search"], dependencies=[Depends(require("reader"))], responses=AUTH_RESPONSES
)


@router.get(
    "/search",
    response_model=SearchResults,
    responses={
        400: {"description": "the connector refused the query (the reason in `detail`)"},
        503: {"description": "no connector is running, or the corpus search failed"},
        504: {"description": "the connector did not answer in time"},
    },
)
async def search_corpus(
    broker: Broker,
    q: Annotated[
        str,
        TEXT_QUERY,
        Query(min_length=1, max_length=QUERY_MAX_CHARS, json_schema_extra=STORABLE),
    ],
    k: Annotated[int, Query(ge=1, le=200)] = 10,
    mode: Literal["hybrid", "lexical", "dense"] = "hybrid",
) -> SearchResults:
    """Hybrid / lexical / dense search over the local corpus (served by the connector's `corpus` source)."""
    try:
        query = deidentified_within(q, QUERY_MAX_CHARS, "the query")
    except ValueError as exc:  # a 422 like the parameter's own checks: the field and the rule
        raise RequestValidationError(
            [{"type": "value_error", "loc": ("query", "q"), "msg": str(exc)}]
        ) from None
    ask = SearchEvidence(query=query, sources=["corpus"], limit=k, mode=mode)
    try:
        reply = await broker.request(ask, subjects.CONNECTOR_SEARCH, timeout=15.0)
    except NoRespondersError as exc:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE, "no connector service is running"
        ) from exc
    except TimeoutError as exc:
        raise HTTPException(
            status.HTTP_504_GATEWAY_TIMEOUT, "the connector service did not answer"
        ) from exc
    found = EvidenceFound.model_validate_json(reply.body)
    if found.error:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, found.error)
    if "corpus" in found.degraded:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE, f"corpus search failed: {found.degraded['corpus']}"
        )
    return SearchResults(query=query, mode=mode, hits=found.hits)
