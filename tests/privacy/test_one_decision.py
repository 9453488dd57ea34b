"""One detector, one decision (issue 36): what the boundary produced is never refused afterwards,
and the ledger checks the fields a person typed — never ids, hashes, run ids, timestamps or the
engine's own JSON (a source list's UUID holding "0242-4616" was once read as a phone and refused)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from research_ledger.deidentified import UncleanText, check_report, clean_fields
from research_privacy.boundary import person_text, require_clean
from research_privacy.probes import probe_set

pytestmark = pytest.mark.unit
QUESTIONS = Path(__file__).resolve().parents[2] / "bench" / "data" / "deid" / "questions.jsonl"
RISKY_IDS = (
    "d4fd681a-0242-4616-8c1e-52b1d0e7a9f3",  # "0242-4616" read as a phone
    "31415926-5358-4979-a323-846264338327",  # an all-digit first group read as a record number
    "a19dec20-7f3e-4c1b-9d2a-1f0e5b6c7d8e",  # "9dec20" read as a date
    "12031961-1203-4961-8123-120319611203",  # "12031961" read as a compact date of birth
)


def test_the_boundarys_output_always_passes_the_ledgers_check() -> None:
    texts = [
        json.loads(line)["text"]
        for line in QUESTIONS.read_text(encoding="utf-8").splitlines()
        if line
    ]
    for probe in probe_set(seed=16, size=120):
        texts += [probe.question, probe.patient_ref]
    for text in texts:
        out = person_text(text)
        assert require_clean(out, what="test") == out
        assert person_text(out) == out  # de-identifying twice changes nothing


@pytest.mark.parametrize("list_id", RISKY_IDS)
def test_a_stored_request_is_read_for_its_persons_fields_only(list_id: str) -> None:
    request: dict[str, Any] = {
        "source_list_id": list_id,
        "run_id": "sl-0242461612031961",
        "workspace": "default",
        "prompt": "Does vitamin D reduce fractures?",
        "keywords": ["vitamin D", "fracture"],
        "digest": "sha256:0242461609dec201",
        "generated_at": "2026-03-14T09:30:00Z",
        "engine": {
            "trace": [{"call": "617-555-0123", "at": "12/03/1961"}],
            "ids": [list_id],
        },  # the engine's own JSON
        "filters": {"year_from": 2010, "venue": "Lancet"},
    }
    check_report(
        subject=request["prompt"],
        subject_key="vitamin d fracture",
        request=request,
        save_to={"kind": "task", "id": "7f3c2a", "owner": list_id},
    )
    assert clean_fields(request, what="a report's request") is request


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("prompt", "Does vitamin D help Jane Roe, MRN 12345678?"),
        ("keywords", ["vitamin D", "call 617-555-0123"]),
        ("claim", "Metformin helped Mr Kowalczyk"),
        ("topic", "statins for DOB 03/14/1961"),
        ("venue", "Dr. Alvarez's clinic"),
    ],
)
def test_a_persons_field_holding_an_identifier_is_refused(field: str, value: object) -> None:
    with pytest.raises(UncleanText):
        check_report(
            subject="vitamin D",
            subject_key="vitamin d",
            request={"filters": {field: value}} if field == "venue" else {field: value},
        )


def test_a_record_reference_id_is_a_persons_field() -> None:
    with pytest.raises(UncleanText):
        check_report(
            subject="vitamin D",
            subject_key="vitamin d",
            save_to={"kind": "patient", "id": "MRN 12345678"},
        )
