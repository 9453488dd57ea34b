"""Transport at the edge: one FastStream middleware settles every JetStream message.

Handlers are typed functions (`async def on_task(task: RunResearch) -> None`) that call the
service layer; none of them acknowledges anything. `Delivery`, installed once per broker,
wraps every JetStream delivery and turns the outcome into the right acknowledgement:

- while the handler runs and until the message is settled (parking and its audit included) →
  `in_progress` heartbeats, so a long task or a slow settlement never outlives `ack_wait`;
- success → ack; a command (a person's request: task, review, verification, source list) is then
  deleted from its stream, so it does not outlive its processing;
- bad input (FastStream's pydantic validation, a body that is not JSON, `PrepareError`,
  `RejectMessage`) → parked on `research.deadletter.<subject>` and terminated at once;
- `TransientError` or any other fault → nack with an exponential back-off; on the last
  allowed delivery (`max_deliver`) the message is parked instead, so nothing is retried forever.

Parking copies the bytes as delivered (whatever they are: NUL bytes, invalid UTF-8, 900 KB of
noise) to the dead-letter stream with the reason in headers, then hands a `DeadLetter` (subject,
reason, sha256, size, the task id when one can be read) to the injected recorder, which writes
the audit row and fails the task. The body never reaches the database. If the recorder fails the
message is still parked and terminated, and the failure is logged: parked, never lost, never
redelivered forever. Only when the dead-letter stream itself refuses the copy is the message
nacked for a later delivery.

Core NATS messages (request/reply: connector search, re-run, control verbs) pass through
untouched; those handlers answer with an error instead of raising.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from fast_depends.exceptions import ValidationError as DependsValidationError
from faststream import BaseMiddleware
from faststream.exceptions import AckMessage, NackMessage, RejectMessage
from faststream.nats import NatsBroker
from nats.aio.msg import Msg
from pydantic import ValidationError

from research_contracts import subjects
from research_platform import metrics
from research_platform.errors import PrepareError, TransientError
from research_platform.logging import get_logger

log = get_logger(__name__)

JETSTREAM_ACK_PREFIX = "$JS.ACK."
REPORT_ID_FIELDS = (
    "review_id",
    "verification_id",
    "source_list_id",
)  # commands whose id is their report's id
REASON_LIMIT = 500
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]+")


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """What the audit log learns about a parked message: never its body."""

    service: str
    subject: str
    reason: str
    sha256: str
    size: int
    deliveries: int
    message_id: str  # the `Nats-Msg-Id` of the parked copy: links the audit row to the stream
    task_id: uuid.UUID | None = None
    report_id: uuid.UUID | None = (
        None  # a review's, verification's or source list's id: its report is failed too
    )

    @classmethod
    def of(cls, service: str, raw: Msg, reason: str) -> DeadLetter:
        body = raw.data or b""
        try:
            origin = f"{raw.metadata.stream}-{raw.metadata.sequence.stream}"
        except Exception:  # noqa: BLE001 - not a JetStream message: no stream position to name it by
            origin = uuid.uuid4().hex
        return cls(
            service=service,
            subject=raw.subject,
            reason=printable(reason),
            sha256=hashlib.sha256(body).hexdigest(),
            size=len(body),
            deliveries=delivery_count(raw),
            message_id=f"dead-letter-{origin}",
            task_id=task_id_in(body),
            report_id=uuid_field(body, *REPORT_ID_FIELDS),
        )


Recorder = Callable[[DeadLetter], Awaitable[None]]


def printable(text: str, limit: int = REASON_LIMIT) -> str:
    """`text` safe for a NATS header and a Postgres jsonb value: no control bytes, valid UTF-8."""
    clean = _UNPRINTABLE.sub(" ", text).encode("utf-8", "replace").decode("utf-8")
    return clean[:limit]


def task_id_in(body: bytes) -> uuid.UUID | None:
    """The `task_id` of a JSON object body, when there is one to read (best effort)."""
    return uuid_field(body, "task_id")


def uuid_field(body: bytes, *names: str) -> uuid.UUID | None:
    """The first of `names` a JSON object body holds as a UUID (best effort; None otherwise)."""
    try:
        value = json.loads(body)
    except (ValueError, TypeError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    for name in names:
        try:
            return uuid.UUID(str(value[name]))
        except (KeyError, ValueError, TypeError):
            continue
    return None


def invalid_reason(exc: BaseException) -> str | None:
    """Why a message is bad input, or None when `exc` is a fault worth retrying.

    Validation reasons name the field and the rule only, never the offending value (it may be
    the PHI or the bytes that made the message poison).
    """
    if isinstance(exc, DependsValidationError) and isinstance(exc.original_error, ValidationError):
        exc = exc.original_error
    if isinstance(exc, ValidationError):
        fields = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()
        )
        return f"invalid message: {fields}"
    if isinstance(exc, UnicodeDecodeError | json.JSONDecodeError):
        return f"invalid message: not JSON ({type(exc).__name__})"
    if isinstance(exc, PrepareError):
        return f"prepare: {exc}"
    if isinstance(exc, RejectMessage):
        return "rejected by the handler"
    return None


def backoff_s(delivery: int, *, base_s: float = 0.5, cap_s: float = 30.0) -> float:
    """Delay before the next delivery of a message that failed on delivery number `delivery`."""
    return min(cap_s, base_s * 2.0**delivery)


class Delivery:
    """The per-broker settlement policy; FastStream calls it once per message (see module doc)."""

    def __init__(
        self,
        broker: NatsBroker,
        *,
        service: str,
        max_deliver: int,
        heartbeat_s: float,
        record: Recorder | None = None,
    ) -> None:
        self.broker = broker
        self.service = service
        self.max_deliver = max_deliver
        self.heartbeat_s = heartbeat_s
        self.record = record

    @classmethod
    def install(
        cls, broker: NatsBroker, *, service: str, max_deliver: int, ack_wait_s: float
    ) -> Delivery:
        """Settle every JetStream message `broker` consumes; bind the recorder in the lifespan."""
        delivery = cls(
            broker, service=service, max_deliver=max_deliver, heartbeat_s=max(0.2, ack_wait_s / 3)
        )
        broker.add_middleware(delivery)
        return delivery

    def __call__(self, msg: Any, /, *, context: Any) -> _Settlement:
        return _Settlement(msg, context=context, delivery=self)

    async def park(self, raw: Msg, reason: str) -> bool:
        """Copy `raw` to the dead-letter stream and record it; False when the copy was refused."""
        letter = DeadLetter.of(self.service, raw, reason)
        try:
            ack = await self.broker.publish(
                raw.data or b"",
                subjects.dead_letter_subject(raw.subject),
                headers={
                    subjects.MSG_ID_HEADER: letter.message_id,  # a re-park of the same message is a no-op
                    "x-original-subject": raw.subject,
                    "x-reason": letter.reason,
                    "x-service": self.service,
                    "x-sha256": letter.sha256,
                    "x-deliveries": str(letter.deliveries),
                },
                stream=subjects.DEAD_LETTER_STREAM,
                timeout=subjects.PUBLISH_TIMEOUT_S,
            )
        except Exception as exc:  # noqa: BLE001 - cannot park it: keep it for a later delivery rather than lose it
            log.error(
                "dead-letter stream refused the message", subject=raw.subject, error=repr(exc)
            )
            return False
        if getattr(ack, "duplicate", False):
            # Parked and recorded already: a delivery made while the first was still being parked
            # (its ack_wait ran out on a busy machine). One audit row per dead letter.
            log.info("message already dead-lettered", subject=raw.subject, sha256=letter.sha256)
            return True
        log.warning(
            "message dead-lettered", subject=raw.subject, reason=letter.reason, sha256=letter.sha256
        )
        try:
            if self.record is None:
                raise RuntimeError("no dead-letter recorder bound (the lifespan did not run)")
            await self.record(letter)
        except Exception as exc:  # noqa: BLE001 - parked is enough: the body waits on the stream for an operator
            log.error(
                "dead-letter audit failed; the message stays parked",
                subject=raw.subject,
                sha256=letter.sha256,
                error=repr(exc),
            )
        return True


async def forget_command(raw: Msg) -> None:
    """Delete a settled command from its stream (`subjects.is_command`): a person's request does not
    outlive its processing. Best effort: on failure the stream's age limit removes it later."""
    if not subjects.is_command(raw.subject):
        return
    try:
        await raw._client.jetstream().delete_msg(raw.metadata.stream, raw.metadata.sequence.stream)
    except Exception as exc:  # noqa: BLE001 - already gone (a redelivery settled twice) or the server is away
        log.info(
            "settled command not deleted from its stream", subject=raw.subject, error=repr(exc)
        )


def delivery_count(raw: Msg) -> int:
    try:
        return int(raw.metadata.num_delivered)
    except Exception:  # noqa: BLE001 - not a JetStream message
        return 1


def is_jetstream(raw: Any) -> bool:
    return isinstance(raw, Msg) and bool(raw.reply) and raw.reply.startswith(JETSTREAM_ACK_PREFIX)


class _Settlement(BaseMiddleware):
    """One JetStream delivery: heartbeats while the handler runs, then exactly one settlement."""

    def __init__(self, msg: Any, /, *, context: Any, delivery: Delivery) -> None:
        super().__init__(msg, context=context)
        self.delivery = delivery
        self.heartbeat: asyncio.Task[None] | None = None

    async def on_receive(self) -> None:
        if self.msg is not None and is_jetstream(self.msg):
            self.heartbeat = asyncio.create_task(self._beat(self.msg))

    async def after_processed(
        self,
        exc_type: type[BaseException] | None = None,
        exc_val: BaseException | None = None,
        exc_tb: TracebackType | None = None,
    ) -> bool | None:
        if (
            self.heartbeat is None or self.msg is None
        ):  # core NATS or a publish scope: nothing to settle
            return False
        raw: Msg = self.msg
        if isinstance(exc_val, asyncio.CancelledError):
            self.heartbeat.cancel()
            return False  # shutting down: ack_wait hands the message to another replica
        # The heartbeat goes on through the settlement: parking a message (a publish and the
        # recorder's transaction) can outlast ack_wait on a busy machine, and a redelivery then
        # would be parked — and audited — a second time.
        try:
            await self._settle(raw, exc_val)
        except Exception as exc:  # noqa: BLE001 - the consumer keeps serving; JetStream redelivers after ack_wait
            log.error("settling a message failed", subject=raw.subject, error=repr(exc))
        finally:
            self.heartbeat.cancel()
        return True

    async def _settle(self, raw: Msg, exc: BaseException | None) -> None:
        service = self.delivery.service
        if exc is None or isinstance(exc, AckMessage):
            await raw.ack()
            metrics.settled(service, raw.subject, "acked")
            await forget_command(raw)
            return
        attempt = delivery_count(raw)
        reason = invalid_reason(exc)
        if reason is None and isinstance(exc, NackMessage) and attempt < self.delivery.max_deliver:
            await raw.nak(delay=backoff_s(attempt))
            metrics.settled(service, raw.subject, "nacked")
            return
        if reason is None:
            kind = "transient" if isinstance(exc, TransientError) else "error"
            if attempt < self.delivery.max_deliver:
                log.warning(
                    "message failed, will retry",
                    subject=raw.subject,
                    attempt=attempt,
                    error=repr(exc),
                )
                await raw.nak(delay=backoff_s(attempt))
                metrics.settled(service, raw.subject, "nacked")
                return
            reason = f"{kind} after {attempt} deliveries: {exc!r}"
        if await self.delivery.park(raw, reason):
            await raw.term()
            metrics.settled(service, raw.subject, "dead_lettered")
            await forget_command(raw)
        else:
            await raw.nak(delay=backoff_s(attempt))
            metrics.settled(service, raw.subject, "nacked")

    async def _beat(self, raw: Msg) -> None:
        """Tell JetStream the message is still being worked on, so `ack_wait` does not expire."""
        while True:
            await asyncio.sleep(self.delivery.heartbeat_s)
            try:
                await raw.in_progress()
            except Exception:  # noqa: BLE001 - settled or disconnected: stop beating
                return
