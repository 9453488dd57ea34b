"""The literature-review command: the topic is worded, single-spaced and de-identified (and
refused, with the reason, when its placeholders push it past the limit), the corpus is always
asked, the server's fields are the server's, and the run id and ledger key are derived."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from pydantic import ValidationError

from research_contracts.reviews import (
    TOPIC_MAX_CHARS,
    RequestReview,
    ReviewCompleted,
    ReviewFilters,
    ReviewRequest,
    topic_key,
)
from research_contracts.runs import valid_run_id

pytestmark = pytest.mark.unit


def test_a_topic_is_single_spaced_and_the_corpus_always_comes_first() -> None:
    request = ReviewRequest(
        topic="  vitamin D   and\tfractures  ", sources=["pubmed", "corpus", "pubmed"]
    )
    assert request.topic == "vitamin D and fractures"
    assert request.sources == ["corpus", "pubmed"]


def test_a_name_in_a_topic_is_replaced_by_a_placeholder() -> None:
    request = ReviewRequest(topic="denosumab for Jane Roe's osteoporosis")
    assert "Jane" not in request.topic and "[NAME_1]" in request.topic
    assert request.topic.startswith("denosumab for ")


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"topic": "? !"}, ("topic",)),
        ({"topic": "x" * (TOPIC_MAX_CHARS + 1)}, ("topic",)),
        ({"topic": "vitamin D", "sources": ["google"]}, ("sources", 0)),
        ({"topic": "vitamin D", "max_iterations": 3}, ("max_iterations",)),
        ({"topic": "vitamin D", "max_iterations": 0}, ("max_iterations",)),
        ({"topic": "vitamin D", "filters": {"year_from": 999}}, ("filters", "year_from")),
        # the fields the server sets: a caller sending them is refused
        ({"topic": "vitamin D", "run_id": "rv-1"}, ("run_id",)),
        ({"topic": "vitamin D", "refresh": True}, ("refresh",)),
        ({"topic": "vitamin D", "origin": "replicator"}, ("origin",)),
    ],
)
def test_a_review_request_refuses_bad_input_naming_the_field(
    fields: dict[str, Any], where: tuple
) -> None:
    with pytest.raises(ValidationError) as refused:
        ReviewRequest.model_validate(fields)
    assert [error["loc"] for error in refused.value.errors()] == [where]


def test_a_topic_its_placeholders_push_past_the_limit_is_refused_with_the_reason() -> None:
    labelled_dates = [f"DOB {month}/{day}/70" for month in range(1, 10) for day in range(1, 10)]
    topic = "vitamin D in " + ", ".join(labelled_dates[:38])
    assert len(topic) <= TOPIC_MAX_CHARS
    with pytest.raises(ValidationError, match="longer than 500 characters once personal"):
        ReviewRequest(topic=topic)


def test_review_filters_take_the_years_in_either_order() -> None:
    filters = ReviewFilters(year_from=2024, year_to=2010)
    assert (filters.year_from, filters.year_to) == (2010, 2024)


def test_a_review_command_derives_its_run_id_from_the_review_id() -> None:
    review_id = uuid.uuid4()
    command = RequestReview(review_id=review_id, topic="vitamin D")
    assert command.effective_run_id() == f"rv-{review_id.hex[:16]}-1"
    assert valid_run_id(command.effective_run_id())
    assert RequestReview(topic="vitamin D", run_id="rv-given").effective_run_id() == "rv-given"
    with pytest.raises(ValidationError):
        RequestReview(topic="vitamin D", run_id="rv.other.event")


def test_the_topic_key_keeps_topic_words_not_function_words_or_identifiers() -> None:
    assert topic_key("The effect of Vitamin D on fracture risk in older adults, vitamin D") == (
        "effect vitamin fracture risk older adults"
    )
    topic = ReviewRequest(topic="Patient Jane Roe DOB 03/04/1970: osteoporosis and denosumab").topic
    assert topic_key(topic) == "patient osteoporosis denosumab"


def test_a_completed_review_is_announced_once_per_run() -> None:
    completed = ReviewCompleted(
        review_id=uuid.uuid4(), run_id="rv-1", version=1, verdict="PASS", iterations=2, claims=3
    )
    assert completed.msg_id() == "review-completed-rv-1"
    with pytest.raises(ValidationError):
        ReviewCompleted(
            review_id=uuid.uuid4(), run_id="rv-1", version=0, verdict="PASS", iterations=1, claims=0
        )
