"""Counts failed API-key checks per source (an address, a presented key prefix) in a bounded window.

A source may fail `limit` key checks within `window_s` seconds; past that its failed checks are
answered 401 with `Retry-After` (`auth.py`) until its oldest failure leaves the window. Only
failures are throttled: a request with a valid key is always served, so a neighbour behind the
same address (a shared host, a NAT) cannot lock a user out by sending bad keys. Guessing a key
is hopeless anyway (256-bit random keys, compared by hash). Kept in memory per gateway process
(a restart forgets); at most `MAX_CLIENTS` sources are remembered.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

# Clients remembered at most; past this the ones with the oldest last failure are forgotten.
MAX_CLIENTS = 10_000


@dataclass
class FailedAuthThrottle:
    limit: int = 20
    window_s: float = 60.0
    clock: Callable[[], float] = time.monotonic
    _failures: dict[str, deque[float]] = field(default_factory=dict)

    def retry_after(self, client: str) -> int | None:
        """Seconds `client` must wait before its key is checked again, or None when it may try now."""
        failures = self._failures.get(client)
        if not failures:
            return None
        now = self.clock()
        while failures and failures[0] <= now - self.window_s:
            failures.popleft()
        if len(failures) < self.limit:
            if not failures:
                del self._failures[client]
            return None
        return max(1, math.ceil(failures[0] + self.window_s - now))

    def failed(self, client: str) -> None:
        """Count one failed key check (no key, an unknown or a revoked key) of `client`."""
        failures = self._failures.pop(client, None) or deque(maxlen=self.limit)
        failures.append(self.clock())
        self._failures[client] = failures  # re-inserted: dict order = order of the latest failure
        if len(self._failures) > MAX_CLIENTS:
            del self._failures[next(iter(self._failures))]
