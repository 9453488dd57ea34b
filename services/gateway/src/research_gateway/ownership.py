"""Who may change a report (a review, a source list): the key that asked for it, or an admin.

Every reader may read every report; a change — refresh a review, re-run a source list, remove or
prefer one of its sources — belongs to the report's owner (`reports.owner.key_id`, recorded by
the gateway when it opens the report, see `research_ledger.reports.Reports.open`) or to an
admin key. A report nobody owns (its command was published straight on the bus, or it was opened
before owners were kept) is changed by admins only. Another researcher's change is refused with
403 and the reason; schedules and workspace limits are admin-only routes anyway.
"""

from __future__ import annotations

from typing import Any, Protocol

from fastapi import HTTPException, status

from research_gateway.auth import Caller


class Owned(Protocol):
    """A report row as ownership reads it (`reports.owner`)."""

    @property
    def owner(self) -> dict[str, Any] | None: ...


# The 403 a route that changes a report answers with (its `responses=`, the OpenAPI document).
OWNED_RESPONSES: dict[int | str, dict[str, Any]] = {
    403: {
        "description": "a key whose role is too low, or a researcher key changing a report another key asked for"
    },
}


def owner_of(caller: Caller) -> dict[str, str]:
    """What a report opened for `caller` records as its owner."""
    return {"key_id": str(caller.key_id)}


def may_change(caller: Caller, report: Owned) -> bool:
    return caller.role == "admin" or (report.owner or {}).get("key_id") == str(caller.key_id)


def require_owner(caller: Caller, report: Owned, what: str) -> None:
    """403 unless `caller` owns `report` or is an admin."""
    if not may_change(caller, report):
        owned = (
            "another key asked for it"
            if (report.owner or {}).get("key_id")
            else "no key owns it (it came from the bus)"
        )
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            f"this {what} is not yours: {owned}; only the key that asked for it or an admin may change it",
        )
