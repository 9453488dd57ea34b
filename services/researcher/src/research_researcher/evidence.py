"""The researcher's client of the connector service (request/reply on `research.connector.search`).

Only de-identified topic queries reach this module (`prepare.guard_question`); it never sees
the task's question or patient context.
"""

from __future__ import annotations

from faststream.nats import NatsBroker
from nats.errors import NoRespondersError
from pydantic import ValidationError

from research_contracts import EvidenceFound, SearchEvidence, TaskFilters, subjects
from research_platform.errors import TransientError
from research_researcher import prepare


async def search(
    broker: NatsBroker,
    query: str,
    *,
    sources: list[str],
    limit: int,
    filters: TaskFilters | None = None,
    timeout_s: float = 15.0,
    query_embedding: list[float] | None = None,
) -> EvidenceFound:
    """Ask the connector service for evidence (with the query's vector when the caller has it);
    raises `TransientError` when it cannot answer."""
    request = SearchEvidence(
        query=query,
        query_embedding=query_embedding,
        sources=sources,
        limit=limit,
        filters=(filters or TaskFilters()).model_copy(update={"sources": sources}),
    )
    try:
        reply = await broker.request(request, subjects.CONNECTOR_SEARCH, timeout=timeout_s)
    except TimeoutError as exc:
        raise TransientError("the connector service did not answer in time") from exc
    except NoRespondersError as exc:
        raise TransientError("no connector service is listening") from exc
    try:
        found = prepare.prepare_evidence(reply.body)
    except ValidationError as exc:
        raise TransientError(f"the connector answered with a malformed reply: {exc.error_count()} errors") from exc
    if found.error:
        raise TransientError(f"the connector refused the search: {found.error}")
    return found
