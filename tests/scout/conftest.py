"""Scout test wiring on real servers: a connector stand-in answering `SearchEvidence` over NATS
request/reply on a unique subject (hits from recorded responses or hand-made papers), and a
`Scout` built the way `main.py` builds it, and the ledger's outbox relay publishing what it staged
to the real JetStream streams (`relay_on`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import nats
import pytest
from nats.js.api import ConsumerConfig, DeliverPolicy

from research_contracts import EvidenceFound, SearchEvidence, SourceHit, subjects
from research_contracts.sourcelists import RequestSourceList
from research_ledger import Ledger
from research_ledger.outbox import OutboxRelay
from research_modes import ConnectorClient
from research_scout.pipeline import Scout
from research_scout.settings import ScoutSettings


@dataclass
class FakeConnector:
    """Answers every search with `hits` (change them between runs); records what was asked."""

    subject: str
    hits: list[SourceHit] = field(default_factory=list)
    asked: list[SearchEvidence] = field(default_factory=list)


@asynccontextmanager
async def fake_connector(nc: nats.NATS, subject: str) -> AsyncIterator[FakeConnector]:
    connector = FakeConnector(subject)

    async def answer(msg) -> None:
        ask = SearchEvidence.model_validate_json(msg.data)
        connector.asked.append(ask)
        await msg.respond(EvidenceFound(hits=connector.hits).model_dump_json().encode())

    sub = await nc.subscribe(subject, cb=answer)
    try:
        yield connector
    finally:
        await sub.unsubscribe()


async def sent_request(
    nc: nats.NATS, source_list_id: object, run_id: str | None = None
) -> RequestSourceList:
    """The list's command (of `run_id`, when given) as the gateway's outbox relay published it
    after the route's commit: the subject's last message, else the next ones until it comes."""
    sub = await nc.jetstream().subscribe(
        subjects.SOURCELIST_REQUESTED,
        config=ConsumerConfig(deliver_policy=DeliverPolicy.LAST_PER_SUBJECT),
    )
    try:
        while True:
            command = RequestSourceList.model_validate_json((await sub.next_msg(10)).data)
            if str(command.source_list_id) == str(source_list_id) and run_id in (
                None,
                command.run_id,
            ):
                return command
    finally:
        await sub.unsubscribe()


def relay_on(sessions, nc: nats.NATS) -> OutboxRelay:
    """The outbox relay a scout runs beside (`research_modes.mode_app`), on the test's connection."""

    async def publish(subject: str, body: bytes, headers: dict[str, str]) -> object:
        return await nc.jetstream().publish(subject, body, headers=headers)

    return OutboxRelay(sessions, publish)


def make_scout(
    sessions, nc: nats.NATS, subject: str, settings: ScoutSettings | None = None
) -> Scout:
    js = nc.jetstream()

    return Scout(
        ledger=Ledger(sessions),
        settings=settings or ScoutSettings(max_iterations=2),
        search=ConnectorClient(lambda: nc, timeout_s=10.0, search_subject=subject).search,
        jetstream=lambda: js,
    )


@pytest.fixture
def scout_factory(sessions, nc) -> Callable[..., Scout]:
    return lambda subject, settings=None: make_scout(sessions, nc, subject, settings)
