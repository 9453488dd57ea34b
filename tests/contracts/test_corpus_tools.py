"""The corpus tools' requests and replies: unknown arguments and out-of-range sizes are refused,
paper ids keep or lose their `corpus:` prefix as asked, and a reply survives its wire form."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from research_contracts.corpus_tools import (
    TOOL_REQUESTS,
    CorpusToolReply,
    GetPaper,
    PaperPassage,
    SearchPapers,
    corpus_id,
)

pytestmark = pytest.mark.unit

SMALLEST: dict[str, dict[str, Any]] = {
    "search_papers": {"query": "vitamin D"},
    "search_metadata": {},
    "publication_trends": {"topic": "vitamin D"},
    "top_cited": {},
    "corpus_overview": {},
    "get_paper": {"paper_ids": ["corpus:1"]},
}


@pytest.mark.parametrize("tool", sorted(TOOL_REQUESTS))
def test_every_tool_request_refuses_an_argument_it_does_not_know(tool: str) -> None:
    model: type[BaseModel] = TOOL_REQUESTS[tool]
    model.model_validate(SMALLEST[tool])
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        model.model_validate({**SMALLEST[tool], "surprise": 1})


@pytest.mark.parametrize(
    "fields",
    [
        {"query": ""},
        {"query": "q", "k": 0},
        {"query": "q", "k": 51},
        {"query": "q", "mode": "bm25"},
    ],
)
def test_a_passage_search_outside_its_bounds_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SearchPapers.model_validate(fields)


def test_get_paper_asks_for_one_to_two_hundred_papers() -> None:
    assert GetPaper(paper_ids=["corpus:1"] * 200).with_text
    for ids in ([], ["corpus:1"] * 201):
        with pytest.raises(ValidationError):
            GetPaper(paper_ids=ids)


def test_corpus_id_drops_only_the_corpus_prefix() -> None:
    assert corpus_id("corpus:4983") == "4983"
    assert corpus_id("4983") == "4983"
    assert corpus_id("pmid:22351513") == "pmid:22351513"


def test_a_tool_reply_survives_its_wire_form() -> None:
    passage = PaperPassage(
        paper_id="corpus:4983",
        title="Vitamin D and fractures",
        score=0.8,
        passage="Fewer fractures were seen.",
        locator="abstract sentence 3",
    )
    reply = CorpusToolReply(tool="search_papers", result=[passage.model_dump(mode="json")])
    back = CorpusToolReply.model_validate_json(reply.model_dump_json())
    assert back == reply and back.error is None
    assert PaperPassage.model_validate(back.result[0]) == passage
