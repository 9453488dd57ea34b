"""Prometheus metrics every service process exposes on its own port (`METRICS_PORT`).

Three sources feed the one process registry:

- FastStream's Prometheus middleware (`instrument`, installed by `run_service` on each broker):
  `research_received_messages_total`, `research_received_messages_in_process` (in-flight),
  `research_received_processed_messages_duration_seconds` (handler latency histogram),
  `research_received_processed_messages_exceptions_total`, `research_published_messages_total`,
  labelled by `app_name` (the service) and `handler` (the subject);
- the settlement of every JetStream message by `delivery.Delivery` (`settled`):
  `research_messages_total{service, subject, result=acked|nacked|dead_lettered}` — what
  actually happened to the message, which the handler's exception alone does not tell;
- `ConsumerLag`, a periodic read of JetStream's consumer info for the durables the process
  consumes: `research_consumer_pending_messages{stream, consumer}` (not yet delivered) and
  `research_consumer_ack_pending_messages{stream, consumer}` (delivered, not yet settled).

Subjects that carry an id (`research.run.<uuid>.event`) are labelled with the id replaced by
`*`, so a label never grows one series per run. The LLM chain and the connector add their
own families (`research_llm.metrics`, `research_connector.metrics`).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from faststream import FastStream
from faststream.nats import NatsBroker
from faststream.nats.prometheus.provider import NatsMetricsSettingsProvider
from faststream.prometheus import ConsumeAttrs, PrometheusMiddleware
from faststream.prometheus.container import MetricsContainer
from faststream.prometheus.manager import MetricsManager
from nats.js.errors import NotFoundError
from prometheus_client import REGISTRY, Counter, Gauge, start_http_server

from research_platform.logging import get_logger
from research_platform.shutdown import cancel_within

log = get_logger(__name__)

PREFIX = "research"
RESULTS = ("acked", "nacked", "dead_lettered")

MESSAGES = Counter(
    "research_messages_total",
    "JetStream messages settled by the consume middleware, by outcome.",
    ["service", "subject", "result"],
)
CONSUMER_PENDING = Gauge(
    "research_consumer_pending_messages",
    "Messages of a durable consumer's stream not yet delivered to it (the consumer's lag).",
    ["stream", "consumer"],
)
CONSUMER_ACK_PENDING = Gauge(
    "research_consumer_ack_pending_messages",
    "Messages delivered to a durable consumer and not yet acknowledged (in flight or awaiting redelivery).",
    ["stream", "consumer"],
)

_ID = re.compile(
    r"(?<=\.)(?:[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}|[0-9a-fA-F]{16,})(?=\.|$)"
)


_RUN_EVENTS = re.compile(r"^research\.run\.[^.]+\.event$")  # one subject per run: counted as one


def subject_label(subject: str) -> str:
    """`subject` with every id token (a uuid or a long hex run) replaced by `*`, and a run's event
    subject (`research.run.<run_id>.event`) by `research.run.*.event`."""
    if _RUN_EVENTS.match(subject):
        return "research.run.*.event"
    return _ID.sub("*", subject)


def settled(service: str, subject: str, result: str) -> None:
    """Count one settlement (`result` is one of `RESULTS`)."""
    MESSAGES.labels(service=service, subject=subject_label(subject), result=result).inc()


class _Subjects(NatsMetricsSettingsProvider):
    """FastStream's NATS attributes with id-free subject labels."""

    def get_consume_attrs_from_message(self, msg: Any) -> ConsumeAttrs:
        attrs = super().get_consume_attrs_from_message(msg)
        attrs["destination_name"] = subject_label(attrs["destination_name"])
        return attrs

    def get_publish_destination_name_from_cmd(self, cmd: Any) -> str:
        return subject_label(super().get_publish_destination_name_from_cmd(cmd))


def _provider(msg: Any) -> _Subjects | None:
    return None if isinstance(msg, Sequence) else _Subjects()  # batches are not consumed here


@cache
def _container() -> MetricsContainer:
    """FastStream's metric families, registered once per process (several brokers share them)."""
    return MetricsContainer(REGISTRY, metrics_prefix=PREFIX, custom_label_names=())


class BrokerMetrics(PrometheusMiddleware):
    """FastStream's Prometheus middleware for service `service`, on the shared families.

    The stock constructor registers new families each time, which a second broker in the same
    process (the tests, the CLI) would refuse as duplicates; this one reuses them.
    """

    def __init__(self, service: str) -> None:
        self._settings_provider_factory = _provider
        self._metrics_container = _container()
        self._metrics_manager = MetricsManager(self._metrics_container, app_name=service)
        self._static_labels: dict[str, str] = {}
        self._dynamic_labels: dict[str, Any] = {}


def instrument(broker: NatsBroker, service: str) -> None:
    """Count, time and track in-flight every message `broker` handles (outermost middleware)."""
    broker.insert_middleware(BrokerMetrics(service))


def durable_consumers(broker: NatsBroker) -> list[tuple[str, str]]:
    """(stream, durable) of every JetStream subscriber declared on `broker`."""
    found = []
    for subscriber in broker.subscribers:
        stream = getattr(getattr(subscriber, "stream", None), "name", None)
        # `extra_options` first: subscribers declared with one shared ConsumerConfig object see
        # the last durable written into it there, but keep their own in `extra_options`.
        durable = (getattr(subscriber, "extra_options", None) or {}).get("durable") or getattr(
            getattr(subscriber, "config", None), "durable_name", None
        )
        if stream and durable:
            found.append((stream, durable))
    return sorted(set(found))


class ConsumerLag:
    """Reads the pending counts of `consumers` from JetStream every `interval_s` into the gauges."""

    STOP_TIMEOUT_S = (
        5.0  # a read in flight is a NATS request (5 s timeout): cancelled, it ends at once
    )

    def __init__(
        self, broker: NatsBroker, consumers: list[tuple[str, str]], *, interval_s: float = 15.0
    ) -> None:
        self.broker = broker
        self.consumers = consumers
        self.interval_s = interval_s
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    async def read_once(self) -> None:
        js = self.broker.connection.jetstream()
        for stream, durable in self.consumers:
            try:
                info = await js.consumer_info(stream, durable)
            except NotFoundError:
                continue  # not created yet: the subscriber creates it when it starts
            CONSUMER_PENDING.labels(stream=stream, consumer=durable).set(info.num_pending or 0)
            CONSUMER_ACK_PENDING.labels(stream=stream, consumer=durable).set(
                info.num_ack_pending or 0
            )

    async def _loop(self) -> None:
        # Ends on the flag, not only on the cancellation `stop` sends: a read can swallow that one
        # (nats' request under Python 3.11's `wait_for`, see `shutdown`), and the loop then ran
        # on forever while the app's stop waited for it.
        while not self._stopping.is_set():
            try:
                await self.read_once()
            except Exception as exc:  # noqa: BLE001 - a metrics read never stops the service
                log.warning("consumer lag read failed", error=repr(exc))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.interval_s)

    async def start(self) -> None:  # async: FastStream runs sync hooks in a worker thread
        if self.consumers and self._task is None:
            self._stopping.clear()
            self._task = asyncio.create_task(self._loop(), name="consumer-lag")

    async def stop(self) -> None:
        """Stop reading: at once, or after `STOP_TIMEOUT_S` with a warning (never a hang)."""
        if self._task is not None:
            self._stopping.set()
            await cancel_within(
                self._task, what="consumer lag reader", timeout_s=self.STOP_TIMEOUT_S
            )
            self._task = None


def serve(port: int, host: str = "0.0.0.0") -> None:  # noqa: S104 - Prometheus scrapes from elsewhere
    """Serve the process registry at `http://host:port/metrics` (a daemon thread)."""
    start_http_server(port, addr=host)


def instrument_app(app: FastStream, service: str, *, interval_s: float = 15.0) -> None:
    """Instrument the broker of `app` and read its consumers' lag while the app runs."""
    broker = app.broker
    if not isinstance(broker, NatsBroker):
        return
    instrument(broker, service)
    lag = ConsumerLag(broker, durable_consumers(broker), interval_s=interval_s)
    app.after_startup(lag.start)
    app.on_shutdown(lag.stop)
