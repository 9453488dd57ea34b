"""The source-list command: ISO 8601 re-run periods, dates in order, keywords cleaned and
de-identified, the server's fields the server's (its run id random and a valid subject token),
and the snapshot diff and detail levels a reader relies on."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from research_contracts.runs import valid_run_id
from research_contracts.sourcelists import (
    DetailLevel,
    ListedSource,
    RecordRef,
    RequestSourceList,
    SourceChange,
    SourceList,
    SourceListDiff,
    SourceListRequest,
    SourceType,
    duration_seconds,
)

pytestmark = pytest.mark.unit

PROMPT = "Does vitamin D supplementation reduce fracture risk in older adults?"


@pytest.mark.parametrize(
    ("duration", "seconds"),
    [("P1D", 86400), ("PT12H", 43200), ("P1W", 604800), ("P1DT6H", 108000), ("PT90M", 5400)],
)
def test_a_re_run_period_is_an_iso_8601_duration(duration: str, seconds: float) -> None:
    assert duration_seconds(duration) == seconds


@pytest.mark.parametrize("bad", ["1 day", "P", "PT", "24h"])
def test_what_is_no_duration_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="is not an ISO 8601 duration"):
        duration_seconds(bad)


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"date_from": "2024-01-01", "date_to": "2023-01-01"}, ()),
        ({"update_frequency": "P0D"}, ("update_frequency",)),
        ({"update_frequency": "1 day"}, ("update_frequency",)),
        ({"language": "english"}, ("language",)),
        ({"workspace": "Team A"}, ("workspace",)),
        ({"num_references": 0}, ("num_references",)),
        ({"num_references": 1001}, ("num_references",)),
        ({"keywords": ["k"] * 21}, ("keywords",)),
        ({"keywords": ["   "]}, ("keywords", 0)),
        ({"save_to": {"kind": "Task", "id": "7f3c"}}, ("save_to", "kind")),
        # the fields the server sets: a caller sending them is refused
        ({"run_id": "sl-mine"}, ("run_id",)),
        ({"trigger": "schedule"}, ("trigger",)),
    ],
)
def test_a_source_list_request_refuses_bad_input_naming_the_field(
    fields: dict[str, Any], where: tuple
) -> None:
    with pytest.raises(ValidationError) as refused:
        SourceListRequest.model_validate({"prompt": PROMPT, **fields})
    assert [error["loc"] for error in refused.value.errors()] == [where]


def test_keywords_are_single_spaced_de_duplicated_and_de_identified() -> None:
    request = SourceListRequest(prompt=PROMPT, keywords=["  vitamin   D ", "vitamin D", "Jane Roe"])
    assert request.keywords == ["vitamin D", "[NAME_1]"]


def test_the_prompt_and_a_record_id_pass_the_privacy_boundary() -> None:
    request = SourceListRequest(
        prompt="Treatments for Jane Roe's osteoporosis",
        save_to=RecordRef(kind="person", id="MRN 12345678"),
    )
    assert "Jane" not in request.prompt and "[NAME_1]" in request.prompt
    assert request.save_to == RecordRef(kind="person", id="MRN [MRN_1]")


def test_a_command_gets_a_fresh_random_run_id_that_is_one_subject_token() -> None:
    first, second = RequestSourceList(prompt=PROMPT), RequestSourceList(prompt=PROMPT)
    assert first.run_id.startswith("sl-") and len(first.run_id) == len("sl-") + 32
    assert valid_run_id(first.run_id)
    assert first.run_id != second.run_id
    assert first.trigger == "request"
    with pytest.raises(ValidationError):
        RequestSourceList(prompt=PROMPT, run_id="sl.other")


def test_detail_levels_rank_by_cost() -> None:
    ranks = [level.rank for level in DetailLevel]
    assert ranks == [0, 1, 2]
    assert DetailLevel.facts_list.rank > DetailLevel.citation_summary.rank


def test_a_diff_is_empty_only_without_new_changed_or_dropped_sources() -> None:
    assert SourceListDiff().empty
    change = SourceChange(source_id=uuid.uuid4(), title="A trial", change="dropped")
    assert not SourceListDiff(dropped=[change]).empty


def test_a_snapshot_survives_its_wire_form() -> None:
    snapshot = SourceList(
        run_id="sl-1",
        prompt=PROMPT,
        keywords=["vitamin D"],
        source_type=SourceType.academic,
        detail_level=DetailLevel.citation_summary,
        generated_at=datetime(2026, 1, 2, tzinfo=UTC),
        sources=[
            ListedSource(
                source_id=uuid.uuid4(),
                title="Vitamin D and fractures",
                relevance_score=0.9,
                summary="It reduces them a little.",
                origin_id="corpus:4983",
            )
        ],
    )
    assert SourceList.model_validate_json(snapshot.model_dump_json()) == snapshot
    with pytest.raises(ValidationError):
        ListedSource(source_id=uuid.uuid4(), title="t", relevance_score=1.5, summary="s")
