"""Normalise a research task from the bus and fail fast on bad input (`PrepareError`).

Also the privacy boundary of the researcher: `guard_question` runs the question and the
patient context through sanitise → delimit → de-identify (research_privacy) once, before
anything is sent out. Connectors get `topic_query` (built by allow-list: only terms of the
scientific vocabulary); the provider chain gets `model_question` (placeholders such as
`[NAME_1]` instead of identifiers; remote prompts are delimited again by research_llm).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from pydantic import ValidationError

from research_contracts import EvidenceFound, RunResearch
from research_platform.errors import PrepareError
from research_privacy import (
    DATA_MARKER,
    Deidentified,
    deidentify,
    delimit,
    outbound_query,
    outbound_text,
    sanitise_report,
)
from research_text import word_list

_SPACES = re.compile(r"\s+")
_NOT_WORD = re.compile(r"[^\w\s-]+")
_PLACEHOLDER = re.compile(r"\[[A-Z_]+_\d+\]")
_PLACEHOLDER_KIND = re.compile(r"\[([A-Z_]+)_\d+\]")
# Words that only introduce an identifier (as research_privacy.outbound drops them with it).
_INTRODUCERS = word_list("labels.introducers")


def prepare_task(body: bytes) -> RunResearch:
    """Parse and normalise a `RunResearch` message; raises `PrepareError` with the reason."""
    try:
        task = RunResearch.model_validate_json(body)
    except ValidationError as exc:
        raise PrepareError(f"invalid research task: {_reasons(exc)}") from exc
    return normalise_task(task)


def normalise_task(task: RunResearch) -> RunResearch:
    """Normalise a validated task (question spacing, entity key); raises `PrepareError` with the reason.

    A NUL byte is refused here: Postgres text cannot store it, so such a task could only fail
    on every delivery.
    """
    if any("\x00" in (text or "") for text in (task.question, task.entity, task.patient_context)):
        raise PrepareError("invalid research task: NUL byte in the text")
    question = _SPACES.sub(" ", task.question).strip()
    if len(question) < 3:
        raise PrepareError("invalid research task: question is empty after normalisation")
    # The entity travels in prompts, events and the ledger: it is keyed from de-identified text only.
    entity = entity_key(ledger_topic(task.entity)) if task.entity else ""
    entity = entity or entity_key(ledger_topic(question))
    if not entity:
        raise PrepareError("invalid research task: entity is empty after normalisation")
    return task.model_copy(update={"question": question, "entity": entity})


def entity_key(text: str) -> str:
    """The normalised key claims of one entity share: lowercase words, single spaces."""
    return _SPACES.sub(" ", _NOT_WORD.sub(" ", text.lower())).strip()[:200]


def entity_was_given(task: RunResearch) -> bool:
    """True when the submitter named the entity (prepare derives one from the question otherwise)."""
    return bool(task.entity) and task.entity != entity_key(ledger_topic(task.question))


def ledger_topic(text: str) -> str:
    """`text` sanitised and de-identified (research_privacy.deidentify), placeholders removed.

    The entity is stored and shown, never searched for, so the strict outbound allow-list is not
    used here: it would drop mid-sentence capitalised words ("Vitamin D") along with names.
    """
    kept: list[str] = []
    for token in deidentify(sanitise_report(text).text).text.split():
        if _PLACEHOLDER.search(
            token
        ):  # an identifier goes with the words that introduced it ("for patient", "MRN:")
            while kept and _NOT_WORD.sub("", kept[-1]).lower() in _INTRODUCERS:
                kept.pop()
            continue
        kept.append(token)
    return " ".join(kept)


def safe_topic(text: str) -> str:
    """`text` sanitised and de-identified, with identifiers and their labels removed."""
    return topic_query(_guard(text, Deidentified(text=""))[0])


def prepare_evidence(body: bytes) -> EvidenceFound:
    """Parse the connector's reply; a malformed reply is a transient fault of the connector."""
    return EvidenceFound.model_validate_json(body)


@dataclass(frozen=True, slots=True)
class GuardedQuestion:
    """What may leave the process about a task; the original values stay in `RunResearch`."""

    model_question: (
        str  # for the provider chain: de-identified question (+ de-identified patient context)
    )
    topic_query: str  # for connectors: the scientific topic only
    identifiers: dict[str, int] = field(default_factory=dict)  # category → count (never the values)
    neutralised: int = 0  # prompt-injection phrases neutralised


def guard_question(question: str, patient_context: str | None = None) -> GuardedQuestion:
    """Sanitise → delimit → de-identify the question and the patient context (one placeholder table)."""
    table = Deidentified(text="")
    safe_question, neutralised = _guard(question, table)
    model_question = safe_question
    if patient_context and patient_context.strip():
        safe_context, more = _guard(patient_context, table)
        neutralised += more
        model_question = f"{safe_question}\nPatient context (de-identified): {safe_context}"
    # What was replaced: by the boundary where the task entered (its placeholders) and by this guard.
    counts = Counter(category for category, _ in table.found)
    for text in (question, patient_context or ""):
        counts.update(m.group(1) for m in _PLACEHOLDER_KIND.finditer(text))
    topic = topic_query(safe_question)
    if len(topic) < 3:
        raise PrepareError(
            "invalid research task: no scientific topic is left once identifiers are removed"
        )
    return GuardedQuestion(
        model_question=model_question,
        topic_query=topic,
        identifiers=dict(counts),
        neutralised=neutralised,
    )


def topic_query(deidentified: str) -> str:
    """The search string for connectors, built by allow-list (`research_privacy.outbound_query`).

    Only terms of the scientific vocabulary survive, in their order: placeholders, the labels
    that introduced them, and any token the vocabulary does not know (a name no pattern caught,
    a street, a record number) are dropped.
    """
    return outbound_query(deidentified)


def _guard(text: str, table: Deidentified) -> tuple[str, int]:
    report = sanitise_report(text)
    # By allow-list: identifiers become placeholders, and so does any token the scientific
    # vocabulary does not know (a name or street no pattern caught).
    guarded = outbound_text(delimit(report.text), into=table).text
    body = guarded.replace(DATA_MARKER, "")
    return _SPACES.sub(" ", body).strip(), len(report.neutralised)


def _reasons(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors())
