"""Normalise a research task from the bus and fail fast on bad input (`PrepareError`).

Also the privacy boundary of the researcher: `guard_question` runs the question and the
patient context through sanitise → delimit → de-identify (research_privacy) once, before
anything is sent out. Connectors get `topic_query` (the scientific topic, identifiers and
their labels removed); the provider chain gets `model_question` (placeholders such as
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
    NEUTRALISED,
    Deidentified,
    deidentify,
    delimit,
    find_identifiers,
    sanitise_report,
)

_SPACES = re.compile(r"\s+")
_NOT_WORD = re.compile(r"[^\w\s-]+")
_PLACEHOLDER = r"\[[A-Z_]+_\d+\]"
# A label that only introduces an identifier ("MRN: [MRN_1]", "Mrs. [NAME_1]") goes with it.
_LABELLED = re.compile(
    r"\b(?:patient(?:\s+(?:id|name|no\.?|number))?|name[sd]?|called|mrn|"
    r"medical\s+record(?:\s+(?:number|no\.?))?|"
    r"record(?:\s+(?:number|no\.?))?|dob|d\.o\.b\.?|date\s+of\s+birth|born(?:\s+on)?|seen\s+on|admitted(?:\s+on)?|"
    r"phone|tel(?:ephone)?|fax|call|e-?mail|address|lives\s+at|living\s+at|ssn|social\s+security(?:\s+number)?|"
    r"account(?:\s+(?:number|no\.?))?|mr|mrs|ms|mx|miss|dr|prof)\.?\s*[:#]?\s*(?=" + _PLACEHOLDER + ")",
    re.IGNORECASE,
)
_PLACEHOLDERS = re.compile(r"\s*" + _PLACEHOLDER)
_EMPTY_GROUPS = re.compile(r"\(\s*[,;:\s]*\)|\[\s*[,;:\s]*\]")
_DANGLING = re.compile(r"(?:\s*[,;:]\s*)+(?=[,;:)?.!]|$)")
_TRAILING_WORDS = re.compile(r"(?:\s+\b(?:for|of|in|with|and|or|to|the|a|an|by|at|on|from|aged?)\b)+\s*([?.!]?)$", re.I)


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
    if any("\x00" in (text or "") for text in (task.question, task.entity, task.patient_ref)):
        raise PrepareError("invalid research task: NUL byte in the text")
    question = _SPACES.sub(" ", task.question).strip()
    if len(question) < 3:
        raise PrepareError("invalid research task: question is empty after normalisation")
    # The entity travels in prompts and events: it is keyed from de-identified text only.
    entity = entity_key(safe_topic(task.entity)) if task.entity else ""
    entity = entity or entity_key(safe_topic(question))
    if not entity:
        raise PrepareError("invalid research task: entity is empty after normalisation")
    return task.model_copy(update={"question": question, "entity": entity})


def entity_key(text: str) -> str:
    """The normalised key claims of one entity share: lowercase words, single spaces."""
    return _SPACES.sub(" ", _NOT_WORD.sub(" ", text.lower())).strip()[:200]


def entity_was_given(task: RunResearch) -> bool:
    """True when the submitter named the entity (prepare derives one from the question otherwise)."""
    return bool(task.entity) and task.entity != entity_key(safe_topic(task.question))


def safe_topic(text: str) -> str:
    """`text` sanitised and de-identified, with identifiers and their labels removed."""
    return topic_query(_guard(text, Deidentified(text=""))[0])


def prepare_evidence(body: bytes) -> EvidenceFound:
    """Parse the connector's reply; a malformed reply is a transient fault of the connector."""
    return EvidenceFound.model_validate_json(body)


@dataclass(frozen=True, slots=True)
class GuardedQuestion:
    """What may leave the process about a task; the original values stay in `RunResearch`."""

    model_question: str  # for the provider chain: de-identified question (+ de-identified patient context)
    topic_query: str  # for connectors: the scientific topic only
    identifiers: dict[str, int] = field(default_factory=dict)  # category → count (never the values)
    neutralised: int = 0  # prompt-injection phrases neutralised


def guard_question(question: str, patient_ref: str | None = None) -> GuardedQuestion:
    """Sanitise → delimit → de-identify the question and the patient context (one placeholder table)."""
    table = Deidentified(text="")
    safe_question, neutralised = _guard(question, table)
    model_question = safe_question
    if patient_ref and patient_ref.strip():
        safe_context, more = _guard(patient_ref, table)
        neutralised += more
        model_question = f"{safe_question}\nPatient context (de-identified): {safe_context}"
    counts = Counter(category for category, _ in table.found)
    topic = topic_query(safe_question)
    if len(topic) < 3:
        raise PrepareError("invalid research task: no scientific topic is left once identifiers are removed")
    return GuardedQuestion(
        model_question=model_question,
        topic_query=topic,
        identifiers=dict(counts),
        neutralised=neutralised,
    )


def topic_query(deidentified: str) -> str:
    """The search string for connectors: placeholders and the labels that introduced them removed.

    A last check drops anything the de-identifier still recognises, so a connector never
    receives an identifier even when the placeholder pass missed a form.
    """
    text = _LABELLED.sub("", deidentified.replace(NEUTRALISED, " "))
    text = _PLACEHOLDERS.sub("", text)
    for _ in range(3):
        text = _EMPTY_GROUPS.sub("", text)
        text = _DANGLING.sub("", text)
    for found in reversed(find_identifiers(text)):
        text = text[: found.start] + text[found.end :]
    text = _SPACES.sub(" ", text).strip(" ,;:")
    text = re.sub(r"\s+([?.!,;:])", r"\1", text)
    text = _TRAILING_WORDS.sub(r"\1", text)
    return text[:1000]


def _guard(text: str, table: Deidentified) -> tuple[str, int]:
    report = sanitise_report(text)
    guarded = deidentify(delimit(report.text), into=table).text
    body = guarded.replace(DATA_MARKER, "")
    return _SPACES.sub(" ", body).strip(), len(report.neutralised)


def _reasons(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors())
