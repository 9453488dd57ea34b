"""Claim parsing: compound claims split into statements, each with varied queries."""

from __future__ import annotations

import pytest

from research_verification import MAX_CLAIM_CHARS, ClaimParseError, names_subject, parse_claim

pytestmark = pytest.mark.unit


def test_two_predicates_sharing_a_subject_are_two_statements():
    first, second = parse_claim("Aspirin reduces stroke risk and increases bleeding.")
    assert (first.subject, first.predicate) == ("Aspirin", "reduces stroke risk")
    assert (second.subject, second.predicate) == ("Aspirin", "increases bleeding")
    assert second.text == "Aspirin increases bleeding"
    assert "bleeding" in second.search_terms and "aspirin" in second.search_terms


def test_two_clauses_with_their_own_subjects_are_split():
    statements = parse_claim("Vitamin D lowers blood pressure, while statins increase muscle pain.")
    assert [s.subject for s in statements] == ["Vitamin D", "statins"]


def test_a_conjunction_of_nouns_stays_one_statement():
    (statement,) = parse_claim("Aspirin reduces stroke and heart attack risk.")
    assert statement.predicate == "reduces stroke and heart attack risk"


def test_a_determiner_keeps_a_noun_out_of_the_predicate():
    (statement,) = parse_claim("An increase in salt intake raises blood pressure.")
    assert statement.subject == "An increase in salt intake" and statement.verb == "raises"


def test_each_statement_gets_at_least_three_distinct_queries_including_the_contrary():
    for statement in parse_claim("Aspirin reduces stroke risk and increases bleeding."):
        assert len(set(statement.queries)) >= 3
    first = parse_claim("Aspirin reduces stroke risk.")[0]
    assert "Aspirin increase stroke risk" in first.queries  # searches for counter-evidence too
    assert "aspirin stroke risk" in first.queries


def test_a_claim_without_a_known_verb_still_yields_queries():
    (statement,) = parse_claim("0-dimensional biomaterials lack inductive properties.")
    assert statement.verb == "lack" and len(statement.queries) >= 3


def test_leads_to_searches_for_the_object_not_the_preposition():
    (statement,) = parse_claim("High levels of CRP lead to exacerbations of COPD.")
    assert "effect of High levels of CRP on exacerbations of COPD" in statement.queries


@pytest.mark.parametrize("claim", ["", "   ", "?!", "x" * (MAX_CLAIM_CHARS + 1)])
def test_empty_or_oversized_claims_are_rejected_with_a_reason(claim):
    with pytest.raises(ClaimParseError):
        parse_claim(claim)


def test_a_paper_names_a_statements_subject_by_any_of_its_content_words():
    (statement,) = parse_claim(
        "Exercise training improves quality of life in patients with chronic heart failure."
    )
    assert names_subject(statement.subject, "Effects of exercise on health status in heart failure")
    assert names_subject(statement.subject, "Patients trained for 12 weeks"), "tense forms count"
    assert not names_subject(
        statement.subject, "Collaborative care improved global quality of life in chronic disease"
    )
    assert names_subject(
        "RANK-RANKL pathway signalling", "RANK signals regulate Aire-expressing cells"
    ), "hyphenated names split"
    assert names_subject("There", "anything at all"), (
        "a subject without a content word names nothing to look for"
    )
