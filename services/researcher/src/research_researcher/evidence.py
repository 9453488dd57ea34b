"""The researcher's client of the connector service (request/reply on `research.connector.search`):
the modes' one client (`research_modes.ConnectorClient`), so a connector not subscribed yet is
waited for with back-off like everywhere else. The researcher's policy on top of it is strict: a
search the connector could not answer raises `TransientError` (`ToolsUnavailable`), and the task
is redelivered instead of answered from nothing.

Only de-identified topic queries reach this module (`prepare.guard_question`); it never sees
the task's question or patient context.
"""

from __future__ import annotations

from faststream.nats import NatsBroker

from research_contracts import EvidenceFound, SearchEvidence, TaskFilters
from research_modes import ConnectorClient
from research_platform.errors import TransientError


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
    found = await ConnectorClient(lambda: broker.connection, timeout_s=timeout_s).ask(request)
    if found.error:
        raise TransientError(f"the connector refused the search: {found.error}")
    return found
