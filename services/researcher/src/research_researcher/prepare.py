"""Normalise a research task from the bus and fail fast on bad input (`PrepareError`)."""

from __future__ import annotations

import re

from pydantic import ValidationError

from research_contracts import EvidenceFound, RunResearch
from research_platform.errors import PrepareError

_SPACES = re.compile(r"\s+")
_NOT_WORD = re.compile(r"[^\w\s-]+")


def prepare_task(body: bytes) -> RunResearch:
    """Parse and normalise a `RunResearch` message; raises `PrepareError` with the reason."""
    try:
        task = RunResearch.model_validate_json(body)
    except ValidationError as exc:
        raise PrepareError(f"invalid research task: {_reasons(exc)}") from exc
    question = _SPACES.sub(" ", task.question).strip()
    if len(question) < 3:
        raise PrepareError("invalid research task: question is empty after normalisation")
    entity = entity_key(task.entity) if task.entity else entity_key(question)
    if not entity:
        raise PrepareError("invalid research task: entity is empty after normalisation")
    return task.model_copy(update={"question": question, "entity": entity})


def entity_key(text: str) -> str:
    """The normalised key claims of one entity share: lowercase words, single spaces."""
    return _SPACES.sub(" ", _NOT_WORD.sub(" ", text.lower())).strip()[:200]


def prepare_evidence(body: bytes) -> EvidenceFound:
    """Parse the connector's reply; a malformed reply is a transient fault of the connector."""
    return EvidenceFound.model_validate_json(body)


def _reasons(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors())
