"""The client's error: `ApiError`, the gateway's non-2xx answer, under research-engine's root
`ResearchEngineError` (`research_contracts.errors`). Below `client` and `events`, which both raise
it."""

from __future__ import annotations

from typing import Any

from research_contracts.errors import ResearchEngineError


class ApiError(ResearchEngineError):
    """The gateway answered with a non-2xx status."""

    def __init__(
        self, status: int, detail: Any, *, method: str, path: str, key_from: str = ""
    ) -> None:
        self.status, self.detail, self.method, self.path = status, detail, method, path
        hint = f" (key from {key_from})" if status in (401, 403) and key_from else ""
        super().__init__(f"{method} {path} → {status}: {detail}{hint}")
