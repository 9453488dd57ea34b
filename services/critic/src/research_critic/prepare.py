"""Normalise what the critic consumes and fail fast on bad input (`PrepareError`)."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ValidationError

from research_contracts import ClaimProposed, RecritiqueClaim
from research_platform.errors import PrepareError


M = TypeVar("M", bound=BaseModel)


def _parse(model: type[M], body: bytes) -> M:
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        reasons = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors())
        raise PrepareError(f"invalid {model.__name__}: {reasons}") from exc


def prepare_pending(body: bytes) -> ClaimProposed:
    """A `research.claim.pending` event."""
    return _parse(ClaimProposed, body)


def prepare_recritique(body: bytes) -> RecritiqueClaim:
    """A `research.claim.recritique` command from the replicator."""
    return _parse(RecritiqueClaim, body)
