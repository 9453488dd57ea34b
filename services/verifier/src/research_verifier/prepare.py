"""Prepare: a `RequestVerification` becomes a `VerificationJob` — the claim split into testable
statements (step 1, `research_verification.parse_claim`) and the sources to search.

A claim the parser refuses (no statement in it) is a `PrepareError`: retrying will not help, the
command is dead-lettered and the report fails with the parser's reason.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from research_contracts.verifications import RequestVerification
from research_platform.errors import PrepareError
from research_verification import ClaimParseError, Statement, parse_claim


@dataclass(frozen=True)
class VerificationJob:
    verification_id: uuid.UUID
    run_id: str
    claim: str
    statements: list[Statement]
    sources: list[str]
    filters: dict[str, Any]
    watch: bool
    origin: str
    outside_sources: list[str] = field(default_factory=list)

    def stored_request(self) -> dict[str, Any]:
        """What the report row keeps of the request (no free text: the claim is the row's subject)."""
        return {
            "sources": self.sources,
            "filters": self.filters,
            "watch": self.watch,
            "origin": self.origin,
        }

    def stored_claim(self) -> str:
        """The claim as the ledger stores it: de-identified when the command was parsed (the privacy boundary)."""
        return self.claim


def verification_job(command: RequestVerification) -> VerificationJob:
    try:
        statements = parse_claim(command.claim)
    except ClaimParseError as exc:
        raise PrepareError(str(exc)) from exc
    return VerificationJob(
        verification_id=command.verification_id,
        run_id=command.effective_run_id(),
        claim=command.claim,
        statements=statements,
        sources=command.sources,
        filters=command.filters.model_dump(exclude_none=True),
        watch=command.watch,
        origin=command.origin,
        outside_sources=[s for s in command.sources if s != "corpus"],
    )
