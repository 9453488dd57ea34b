"""What the gateway publishes: one declared FastStream publisher per command it sends, so its
AsyncAPI document (`docs/asyncapi/gateway.json`) lists every subject with the payload schema.

    bus = build_bus(settings.require_nats_url())    # in the lifespan; connected there
    await publish_or_503(bus.tasks[tier], task, msg_id=..., what="task")

A research task is published first and its ledger row committed second (see `tasks.py`). A mode's
command (a review, a verification, a source list) is staged in the ledger's outbox in the
transaction that opens its report and published after the commit by the gateway's relay
(`research_ledger.outbox`); these publishers declare its subject and schema. Every command
carries a `Nats-Msg-Id`, so a retried request is stored once by JetStream. The gateway's
request/reply calls (a corpus search, the operators' control verbs) ask and wait; they are not
publishes and the services that answer them document those subjects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from faststream import FastStream
from faststream.nats import JStream, NatsBroker

from research_contracts import RunResearch, Tier, subjects
from research_contracts.reviews import RequestReview
from research_contracts.sourcelists import RequestSourceList
from research_contracts.verifications import RequestVerification
from research_platform.broker import make_broker
from research_platform.settings import Settings

SERVICE = "gateway"


@dataclass(frozen=True)
class Bus:
    """The gateway's broker and its declared publishers."""

    broker: NatsBroker
    tasks: dict[Tier, Any]  # research.task.<tier>
    reviews: Any
    verifications: Any
    source_lists: Any


def _command(
    broker: NatsBroker, subject: str, stream: str, schema: type[Any], title: str, description: str
) -> Any:
    """A publisher of one command onto its stream, which the consuming service declares."""
    return broker.publisher(
        subject,
        stream=JStream(stream, declare=False),
        timeout=subjects.PUBLISH_TIMEOUT_S,
        schema=schema,
        title=title,
        description=description,
    )


def build_bus(nats_url: str) -> Bus:
    """A broker (not connected yet) with every publisher the gateway uses."""
    broker = make_broker(nats_url, SERVICE)
    tasks = {
        tier: _command(
            broker,
            subjects.task_subject(tier.value),
            subjects.TASKS_STREAM,
            RunResearch,
            f"gateway.task.{tier.value}",
            f"A research question of tier `{tier.value}` for the researcher (`POST /tasks`; `Nats-Msg-Id` "
            "`task-<task_id>`, the task id derived from the `Idempotency-Key`).",
        )
        for tier in Tier
    }
    reviews = _command(
        broker,
        subjects.REVIEW_REQUESTED,
        subjects.REVIEWS_STREAM,
        RequestReview,
        "gateway.review_requested",
        "A literature review to run, or to refresh (`POST /reviews`, `/reviews/{id}/refresh`; "
        "`Nats-Msg-Id` `review-<review_id>-<run_id>`).",
    )
    verifications = _command(
        broker,
        subjects.VERIFY_REQUESTED,
        subjects.VERIFICATIONS_STREAM,
        RequestVerification,
        "gateway.verify_requested",
        "A claim to verify (`POST /verifications`; `Nats-Msg-Id` `verify-<verification_id>-<run_id>`).",
    )
    source_lists = _command(
        broker,
        subjects.SOURCELIST_REQUESTED,
        subjects.SOURCELISTS_STREAM,
        RequestSourceList,
        "gateway.sourcelist_requested",
        "A source list to build, or to run again, held to its workspace's limits (`POST /source-lists`, "
        "`/source-lists/{id}/rerun`; `Nats-Msg-Id` `sourcelist-<source_list_id>-<run_id>`).",
    )
    return Bus(broker, tasks, reviews, verifications, source_lists)


def create_app(settings: Settings) -> FastStream:
    """The gateway's bus side as a FastStream app, for its AsyncAPI document only (never run:
    the gateway is the FastAPI app of `main.py`, which builds its own `Bus` in the lifespan)."""
    return FastStream(build_bus(settings.require_nats_url()).broker)
