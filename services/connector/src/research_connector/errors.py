"""Errors of the connector service.

    ResearchEngineError                    (research_platform.errors)
    └── ConnectorError
        └── SourceDegraded                 the source gave no usable answer this time (429 after
            │                              retries, 5xx, timeout, transport error); the search
            │                              goes on with empty hits, a WARNING and an audit row
            ├── MalformedPayload           the answer arrived but could not be parsed
            └── SourceReportedError        the source answered 200 with an error document
                                           (arXiv's error feed, Elsevier's empty-set marker…)

A query carrying personal identifiers is not an error: `fanout.search_all` never sends it to a
source that would pass it on and reports those sources as `degraded: phi_refused`.

`reason` is a short, key-free token (`http_429`, `timeout`, `malformed_payload`…) safe to log,
audit and return to the caller; nothing here ever carries a URL or a header.
"""

from __future__ import annotations

from research_platform.errors import ResearchEngineError


class ConnectorError(ResearchEngineError):
    """Base of every error the connector raises on purpose."""


class SourceDegraded(ConnectorError):
    """A source could not answer; `reason` says why in a few key-free words."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason if not detail else f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class MalformedPayload(SourceDegraded):
    """The source answered, but the body is not the JSON / XML its API documents."""

    def __init__(self, detail: str = "") -> None:
        super().__init__("malformed_payload", detail)


class SourceReportedError(SourceDegraded):
    """The source answered 200 with an error document instead of results."""

    def __init__(self, detail: str = "") -> None:
        super().__init__("source_error", detail)
