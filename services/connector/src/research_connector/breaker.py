"""Per-source circuit breakers, shared by every connector replica through a NATS KV bucket.

Retries and rate limits protect a source that is *slow*; they make a source that is *down*
expensive: every task waits out the retries (and the bucket) before it learns nothing. The
breaker remembers that a source is down so the next lookups skip it at once:

    closed ──(threshold consecutive failures)──▶ open ──(cooldown)──▶ half_open (one probe)
       ▲                                           ▲                        │
       └────────────── probe answered ─────────────┼──── probe failed ──────┘

- `admit(source)` answers before any HTTP: closed → go; open inside the cool-down → skip;
  open past the cool-down → exactly one caller (across all replicas, compare-and-set) becomes
  the half-open probe, every other caller keeps skipping until the probe settles;
- `observe(source, degraded)` after the lookup: an answer closes the circuit (and resets the
  count), a failure counts; the threshold (or a failed probe) opens it.

Only faults of the source count (5xx, 429, timeouts, transport errors, malformed payloads,
deadlines): a disabled or unconfigured source, a refused query or a cached answer say nothing
about its health. Opening and closing are audited (`connector.circuit_opened` /
`connector.circuit_closed`, by the replica that made the transition) and exported as metrics
(`research_connector_circuit_state{source}` 0 closed / 1 half-open / 2 open,
`research_connector_circuit_skips_total{source}`).

State is one JSON value per source in the KV bucket `connector_circuits`. Reads are served
from a local copy at most `refresh_s` old, so a closed circuit costs no round trip per lookup;
every transition is a compare-and-set on the KV revision. When the bucket cannot be reached,
the replica keeps its own state machine (same rules, local only) and logs a warning.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, replace

import nats.errors
import nats.js.errors
from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue
from prometheus_client import Counter, Gauge

from research_connector.buckets import open_shared_bucket
from research_platform.logging import get_logger

log = get_logger(__name__)

KV_BUCKET = "connector_circuits"
CLOSED, HALF_OPEN, OPEN = "closed", "half_open", "open"
# Degraded reasons that say nothing about the source's health.
NOT_FAULTS = frozenset(
    {"disabled", "not_configured", "phi_refused", "unknown_source", "circuit_open"}
)
MAX_RACES = 20

STATE = Gauge(
    "research_connector_circuit_state",
    "Circuit of a source: 0 closed, 1 half-open, 2 open.",
    ["source"],
)
SKIPS = Counter(
    "research_connector_circuit_skips_total",
    "Lookups skipped because the source's circuit is open.",
    ["source"],
)
_LEVEL = {CLOSED: 0, HALF_OPEN: 1, OPEN: 2}

Transition = Callable[[str, str, dict[str, object]], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Circuit:
    """The stored state of one source's circuit (`since`: wall-clock time of the last transition)."""

    state: str = CLOSED
    failures: int = 0
    since: float = 0.0
    reason: str = ""


async def open_circuit_bucket(
    nc: nats.NATS, bucket: str = KV_BUCKET, replicas: int | None = None
) -> KeyValue:
    """The KV bucket of the circuits (see `buckets.py`)."""
    return await open_shared_bucket(
        nc, bucket, "connector circuit breakers: one state per source", replicas
    )


def is_fault(degraded: str | None) -> bool:
    return degraded is not None and degraded not in NOT_FAULTS


class CircuitBreakers:
    """Every source's circuit; `kv=None` keeps state in this process only (tools, unit tests)."""

    def __init__(
        self,
        kv: KeyValue | None,
        *,
        threshold: int = 3,
        cooldown_s: float = 30.0,
        refresh_s: float = 1.0,
        on_transition: Transition | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.threshold = max(1, threshold)
        self.cooldown_s = cooldown_s
        self.refresh_s = refresh_s
        self._kv = kv
        self._on_transition = on_transition
        self._clock = clock
        self._local: dict[
            str, tuple[Circuit, int | None, float]
        ] = {}  # source → (circuit, revision, read at)
        self._lock = asyncio.Lock()

    async def admit(self, source: str) -> bool:
        """True when `source` may be asked now (closed, or this caller is the half-open probe)."""
        circuit, revision = await self._read(source, fresh=False)
        for _ in range(MAX_RACES):
            now = self._clock()
            if circuit.state == CLOSED:
                return True
            if now < circuit.since + self.cooldown_s:  # open, or someone else's probe in flight
                SKIPS.labels(source).inc()
                return False
            # Cool-down over (or a probe that never reported): try to become the probe.
            probe = replace(circuit, state=HALF_OPEN, since=now)
            if await self._swap(source, probe, revision):
                log.info("circuit half-open: probing", source=source)
                return True
            circuit, revision = await self._read(source, fresh=True)
        SKIPS.labels(source).inc()
        return False

    async def observe(self, source: str, degraded: str | None) -> None:
        """What the lookup learnt: an answer (`degraded` None) or a fault of the source."""
        if degraded is not None and not is_fault(degraded):
            return
        fault = degraded is not None
        circuit, revision = await self._read(source, fresh=False)
        for _ in range(MAX_RACES):
            if not fault and circuit.state == CLOSED and circuit.failures == 0:
                return  # the common case: nothing to write
            if fault and circuit.state == OPEN:
                return  # a lookup admitted before the circuit opened, finishing late
            now = self._clock()
            if not fault:
                updated = Circuit(CLOSED, 0, now, "")
            elif circuit.state == HALF_OPEN or circuit.failures + 1 >= self.threshold:
                updated = Circuit(OPEN, circuit.failures + 1, now, degraded or "")
            else:
                updated = replace(circuit, failures=circuit.failures + 1, reason=degraded or "")
            if await self._swap(source, updated, revision):
                if updated.state != circuit.state:
                    await self._announce(source, circuit, updated)
                return
            circuit, revision = await self._read(source, fresh=True)

    async def state(self, source: str) -> Circuit:
        """The circuit as stored now (for status and tests)."""
        return (await self._read(source, fresh=True))[0]

    # --- storage: the KV bucket, or this process when it cannot be reached -------------------
    async def _read(self, source: str, *, fresh: bool) -> tuple[Circuit, int | None]:
        known = self._local.get(source)
        if known is not None and (
            self._kv is None or (not fresh and self._clock() - known[2] < self.refresh_s)
        ):
            return known[0], known[1]
        if self._kv is not None:
            try:
                entry = await self._kv.get(source)
                circuit = Circuit(**json.loads(entry.value or b"{}"))
                self._remember(source, circuit, entry.revision)
                return circuit, entry.revision
            except KeyNotFoundError:
                self._remember(source, Circuit(), None)
                return Circuit(), None
            except (TimeoutError, nats.errors.Error, ValueError, TypeError) as exc:
                log.warning(
                    "circuit state unavailable, using this replica's",
                    source=source,
                    error=repr(exc),
                )
        circuit, revision = (known[0], known[1]) if known else (Circuit(), None)
        return circuit, revision

    async def _swap(self, source: str, circuit: Circuit, revision: int | None) -> bool:
        """Compare-and-set `circuit` over `revision`; False when another replica wrote first."""
        if self._kv is not None:
            value = json.dumps(asdict(circuit)).encode()
            try:
                if revision is None:
                    revision = await self._kv.create(source, value)
                else:
                    revision = await self._kv.update(source, value, last=revision)
            except nats.js.errors.KeyValueError:  # wrong last revision: another replica wrote first
                return False
            except (TimeoutError, nats.errors.Error) as exc:
                log.warning(
                    "circuit state unavailable, using this replica's",
                    source=source,
                    error=repr(exc),
                )
        self._remember(source, circuit, revision)
        return True

    def _remember(self, source: str, circuit: Circuit, revision: int | None) -> None:
        self._local[source] = (circuit, revision, self._clock())
        STATE.labels(source).set(_LEVEL.get(circuit.state, 0))

    async def _announce(self, source: str, before: Circuit, after: Circuit) -> None:
        payload: dict[str, object] = {"source": source, "previous": before.state}
        if after.state == OPEN:
            payload.update(failures=after.failures, reason=after.reason, cooldown_s=self.cooldown_s)
            log.warning("circuit opened: source skipped", **payload)
        else:
            log.info("circuit closed: source answers again", **payload)
        if self._on_transition is not None and after.state in (OPEN, CLOSED):
            await self._on_transition(source, after.state, payload)
