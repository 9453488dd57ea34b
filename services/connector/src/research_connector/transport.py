"""HTTP access of one source: its token bucket, retries with backoff, and no secret in any message.

`SourceHttp.request` either returns a response the caller can parse or raises `SourceDegraded`
with a short key-free reason:

- 429 and 5xx are retried up to `max_retries` times, waiting what `Retry-After` asks (seconds
  or an HTTP date) or an exponential backoff; a `Retry-After` longer than `max_retry_after_s`
  is not waited for (the caller's deadline would expire first) and degrades at once;
- timeouts and transport errors are retried the same way;
- other 4xx answers (400, 401, 403…) are not retried: asking again will not help;
- 404 returns None when the caller asked for it (`fetch` of an unknown id is not a fault).

Reasons never contain a URL (query strings carry API keys) and `redact` scrubs every configured
secret from any detail text before it reaches a log or the audit log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypedDict, Unpack

import httpx
from pydantic import SecretStr

from research_connector.errors import SourceDegraded
from research_connector.ratelimit import RateBucket, Sleep
from research_platform.logging import get_logger

log = get_logger(__name__)


class Query(TypedDict, total=False):
    """What a request carries besides its method, URL and body: query parameters and headers."""

    params: dict[str, Any] | None
    headers: dict[str, str] | None


RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504, 520, 522, 524})


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds asked for by a `Retry-After` header (delta-seconds or HTTP-date), if parseable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class Redactor:
    """Replaces every configured secret value with `***` in free text."""

    def __init__(self, secrets: Iterable[SecretStr | None] = ()) -> None:
        self._values = sorted(
            {
                s.get_secret_value()
                for s in secrets
                if s is not None and len(s.get_secret_value()) >= 4
            },
            key=len,
            reverse=True,
        )

    def __call__(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, "***")
        return text


class SourceHttp:
    """Rate-limited, retrying HTTP for one source (shares the process-wide `httpx.AsyncClient`)."""

    def __init__(
        self,
        source: str,
        client: httpx.AsyncClient,
        bucket: RateBucket,
        *,
        timeout_s: float = 10.0,
        max_retries: int = 2,
        backoff_base_s: float = 0.5,
        max_retry_after_s: float = 30.0,
        secrets: Iterable[SecretStr | None] = (),
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.source = source
        self.bucket = bucket
        self.redact = Redactor(secrets)
        self._client = client
        self._timeout = timeout_s
        self._max_retries = max_retries
        self._backoff = backoff_base_s
        self._max_retry_after = max_retry_after_s
        self._sleep = sleep

    async def request(
        self, method: str, url: str, *, json: Any = None, **query: Unpack[Query]
    ) -> httpx.Response:
        """Send one request under the source's rate limit; a 404 is a `SourceDegraded` too."""
        response = await self._send(method, url, json=json, not_found_is_none=False, **query)
        assert response is not None  # only `not_found_is_none=True` yields None
        return response

    async def request_or_none(
        self, method: str, url: str, **query: Unpack[Query]
    ) -> httpx.Response | None:
        """Like `request`, but a 404 (unknown id) answers None instead of degrading."""
        return await self._send(method, url, json=None, not_found_is_none=True, **query)

    async def _send(
        self,
        method: str,
        url: str,
        *,
        json: Any,
        not_found_is_none: bool,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response | None:
        reason = "unknown"
        for attempt in range(self._max_retries + 1):
            await self.bucket.acquire()
            wait: float | None = None
            try:
                response = await self._client.request(
                    method, url, params=params, headers=headers, json=json, timeout=self._timeout
                )
            except httpx.TimeoutException:
                reason = "timeout"
            except httpx.TransportError as exc:
                reason = f"transport_error:{type(exc).__name__}"
            else:
                status = response.status_code
                if status < 400:
                    return response
                if status == 404 and not_found_is_none:
                    return None
                reason = f"http_{status}"
                if status not in RETRYABLE_STATUS:
                    raise SourceDegraded(reason)
                wait = retry_after_seconds(response.headers.get("retry-after"))
                if wait is not None and wait > self._max_retry_after:
                    raise SourceDegraded(
                        reason, f"retry-after {wait:.0f}s exceeds {self._max_retry_after:.0f}s"
                    )
            if attempt == self._max_retries:
                break
            delay = wait if wait is not None else self._backoff * 2**attempt
            log.info(
                "source retry",
                source=self.source,
                reason=reason,
                attempt=attempt + 1,
                delay_s=round(delay, 2),
            )
            await self._sleep(delay)
        raise SourceDegraded(reason, f"after {self._max_retries + 1} attempts")
