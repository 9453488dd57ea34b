"""The claim-verification command: a claim states a finding in words and is de-identified,
sources are known names (refused by position, never echoed), and the run id is derived."""

from __future__ import annotations

import uuid

import pytest
from pydantic import ValidationError

from research_contracts.runs import valid_run_id
from research_contracts.verifications import RequestVerification

pytestmark = pytest.mark.unit


def test_a_claim_keeps_its_science_and_loses_the_patients_name() -> None:
    request = RequestVerification(claim="Aspirin  reduces\nstroke risk in John Smith")
    assert request.claim == "Aspirin reduces stroke risk in [NAME_1]"


@pytest.mark.parametrize("claim", ["000", "? !", "12345"])
def test_a_claim_without_a_word_is_refused(claim: str) -> None:
    with pytest.raises(ValidationError, match="claim must state a finding in words"):
        RequestVerification(claim=claim)


def test_source_names_are_normalised_and_the_corpus_always_asked() -> None:
    assert RequestVerification(claim="Aspirin helps", sources=[" PubMed "]).sources == [
        "corpus",
        "pubmed",
    ]


def test_an_unknown_source_is_refused_by_position_without_echoing_it() -> None:
    with pytest.raises(ValidationError) as refused:
        RequestVerification(claim="Aspirin helps", sources=["corpus", "google"])
    [error] = refused.value.errors()
    assert error["loc"] == ("sources",)
    assert "unknown source at position 1" in error["msg"]
    assert "google" not in error["msg"]


def test_a_verification_derives_its_run_id_from_its_id() -> None:
    verification_id = uuid.uuid4()
    request = RequestVerification(verification_id=verification_id, claim="Aspirin helps")
    assert request.effective_run_id() == f"vf-{verification_id.hex[:16]}-1"
    assert valid_run_id(request.effective_run_id())


def test_a_verification_refuses_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        RequestVerification.model_validate({"claim": "Aspirin helps", "tier": "emergency"})
