"""The one client the modes use to reach the connector service, and its one failure policy.

Two kinds of call, both NATS request/reply:

- a corpus tool (`research.connector.corpus.<tool>`, `call`): the local corpus is the ground every
  mode stands on, so a tool that cannot answer raises `ToolsUnavailable` (transient: the command is
  redelivered, and after the last delivery the report fails with the reason);
- a search (`research.connector.search`, `search` / `outside`): fail soft — a search the connector
  could not answer comes back as an `EvidenceFound` whose every asked source is `degraded` with the
  reason, and `SourceLog` keeps what was down for the run (a run event, an audit row, the report's
  metadata); a run whose every source failed raises `SourcesDown` and ends `failed` with the reason,
  never `completed` with zero sources as if the literature were empty.

A request that finds **no responder** (the connector not subscribed yet, as right after `up`, or
restarting) is not an answer: it is retried with a doubling back-off for up to
`no_responder_wait_s` before it counts as a failure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.errors import NoRespondersError
from pydantic import BaseModel, ValidationError

from research_contracts import EvidenceFound, SearchEvidence, TaskFilters, subjects
from research_contracts.corpus_tools import CorpusToolReply
from research_modes.errors import SourcesDown, ToolsUnavailable
from research_platform.logging import get_logger

log = get_logger(__name__)

NO_RESPONDER_WAIT_S = 20.0  # how long a request waits for the connector to subscribe (a fresh `up`)
FIRST_BACKOFF_S = 0.1
MAX_BACKOFF_S = 2.0
REASON_LIMIT = 300


class ConnectorClient:
    """The connector's corpus tools and outside search over NATS (the connection is looked up per call:
    the broker connects after the service's lifespan starts)."""

    def __init__(
        self,
        connection: Callable[[], NatsClient],
        *,
        timeout_s: float,
        no_responder_wait_s: float = NO_RESPONDER_WAIT_S,
        search_subject: str = subjects.CONNECTOR_SEARCH,
    ) -> None:
        self._connection = connection
        self.timeout_s = timeout_s
        self.no_responder_wait_s = no_responder_wait_s
        self.search_subject = search_subject

    async def request(self, subject: str, payload: bytes) -> Msg:
        """One request; a missing responder is waited for with back-off up to the bound, then raised."""
        delay, waited = FIRST_BACKOFF_S, 0.0
        while True:
            try:
                return await self._connection().request(subject, payload, timeout=self.timeout_s)
            except NoRespondersError:
                if waited >= self.no_responder_wait_s:
                    raise
                log.info("no responder on %s yet; retrying", subject, waited_s=round(waited, 2))
                await asyncio.sleep(delay)
                waited += delay
                delay = min(
                    delay * 2,
                    MAX_BACKOFF_S,
                    max(self.no_responder_wait_s - waited, FIRST_BACKOFF_S),
                )

    async def call(self, tool: str, request: BaseModel) -> Any:
        """A corpus tool's `result` JSON; raises `ToolsUnavailable`."""
        try:
            msg = await self.request(
                subjects.corpus_tool_subject(tool), request.model_dump_json().encode()
            )
        except Exception as exc:
            raise ToolsUnavailable(f"{tool}: {type(exc).__name__}: {exc}") from exc
        reply = CorpusToolReply.model_validate_json(msg.data)
        if reply.error:
            raise ToolsUnavailable(f"{tool}: {reply.error}")
        return reply.result

    async def ask(self, ask: SearchEvidence) -> EvidenceFound:
        """The connector's answer, raising `ToolsUnavailable` when it gave none (the strict form the
        researcher uses: its task is redelivered)."""
        try:
            msg = await self.request(self.search_subject, ask.model_dump_json().encode())
        except TimeoutError as exc:
            raise ToolsUnavailable("the connector service did not answer in time") from exc
        except NoRespondersError as exc:
            raise ToolsUnavailable("no connector service is listening") from exc
        try:
            return EvidenceFound.model_validate_json(msg.data)
        except ValidationError as exc:
            raise ToolsUnavailable(
                f"the connector answered with a malformed reply: {exc.error_count()} errors"
            ) from exc

    async def search(self, ask: SearchEvidence) -> EvidenceFound:
        """Fail soft: a search the connector could not answer has every asked source `degraded`."""
        try:
            return await self.ask(ask)
        except ToolsUnavailable as exc:
            cause = exc.__cause__
            reason = f"{type(cause).__name__}: {exc}" if cause is not None else str(exc)
            log.warning("connector search failed", error=reason)
            return EvidenceFound(degraded=dict.fromkeys(ask.sources, reason[:REASON_LIMIT]))

    async def outside(self, query: str, sources: list[str], limit: int) -> EvidenceFound:
        """Evidence from the outside connectors named (fail soft)."""
        return await self.search(
            SearchEvidence(query=query[:1000], sources=sources, limit=limit, filters=TaskFilters())
        )


@dataclass
class SourceLog:
    """Which sources one run asked, which answered and which were down (with the first reason)."""

    asked: set[str] = field(default_factory=set)
    answered: set[str] = field(default_factory=set)
    down: dict[str, str] = field(default_factory=dict)

    def note(self, sources: list[str], found: EvidenceFound) -> dict[str, str]:
        """Record one search's outcome; returns the sources newly seen down."""
        fresh: dict[str, str] = {}
        for source in sources:
            self.asked.add(source)
            reason = found.degraded.get(source) or found.error
            if reason is None:
                self.answered.add(source)
            elif source not in self.down:
                self.down[source] = fresh[source] = str(reason)[:REASON_LIMIT]
        return fresh

    def answered_by(self, source: str) -> None:
        self.asked.add(source)
        self.answered.add(source)

    @property
    def all_down(self) -> bool:
        return bool(self.asked) and not self.answered

    def reason(self) -> str:
        return "; ".join(f"{source}: {why}" for source, why in sorted(self.down.items()))

    def check(self) -> None:
        """Raise `SourcesDown` when the run asked sources and none of them ever answered."""
        if self.all_down:
            raise SourcesDown(f"every source failed ({self.reason()})")

    def metadata(self) -> dict[str, Any]:
        """What a report says about its sources: `sources_down` (source → reason) when any was down."""
        return {"sources_down": dict(sorted(self.down.items()))} if self.down else {}
