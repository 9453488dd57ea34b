"""Unit tests: reading input records, chunking, and reciprocal rank fusion by hand."""

from __future__ import annotations

import json

import pytest

from research_corpus.errors import MalformedRecordError
from research_corpus.formats import detect_format
from research_corpus.ranking import ChunkHit, fuse, rank_papers
from research_corpus.records import PaperRecord, Section, chunk_paper, read_jsonl
from research_platform.settings import CorpusSettings

pytestmark = pytest.mark.unit


def test_scifact_and_generic_lines_are_read_and_bad_lines_carry_their_number(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "id": "p1",
                        "title": "T1",
                        "text": "One. Two.",
                        "year": "2019",
                        "authors": ["A"],
                    }
                ),
                "{not json",
                "",
                json.dumps({"title": "no id"}),
                json.dumps({"id": "p2", "title": "T2", "abstract": ["S1.", "S2."], "year": "soon"}),
                json.dumps({"id": "p3", "abstract": "Only text here."}),
            ]
        )
    )
    items = list(read_jsonl(path, "jsonl"))
    good = [i for i in items if isinstance(i, PaperRecord)]
    bad = [i for i in items if isinstance(i, MalformedRecordError)]
    assert [p.external_id for p in good] == ["p1", "p3"]
    assert good[0].year == 2019 and good[0].sections[0].sentences == ["One.", "Two."]
    assert [e.line for e in bad] == [2, 4, 5]
    assert "invalid JSON" in bad[0].reason and "id" in bad[1].reason and "year" in bad[2].reason


def test_format_detection(tmp_path):
    scifact = tmp_path / "s.jsonl"
    scifact.write_text(json.dumps({"doc_id": 1, "title": "t", "abstract": ["a"]}) + "\n")
    generic = tmp_path / "g.jsonl"
    generic.write_text(json.dumps({"id": 1, "title": "t"}) + "\n")
    assert detect_format(scifact) == "scifact"
    assert detect_format(generic) == "jsonl"
    assert detect_format(tmp_path) == "pdf-dir"


def test_long_sections_are_chunked_on_sentence_boundaries_with_locators():
    words = " ".join(["word"] * 50) + "."
    paper = PaperRecord(
        "x", "Title", [Section("abstract", [words] * 3), Section("methods", ["Short method."])]
    )
    chunks = chunk_paper(paper, chunk_words=120)
    assert [c.locator for c in chunks] == [
        "abstract chunk 1",
        "abstract chunk 2",
        "section:methods",
    ]
    assert [c.index for c in chunks] == [0, 1, 2]
    assert chunks[0].text.count("word") == 100  # two whole sentences fit in 120 words, not three


def test_content_hash_changes_with_content_only():
    a = PaperRecord("x", "Title", [Section("abstract", ["S."])], year=2020)
    b = PaperRecord("x", "Title", [Section("abstract", ["S."])], year=2020, line=9)
    c = PaperRecord("x", "Title", [Section("abstract", ["S."])], year=2021)
    assert a.content_hash() == b.content_hash() != c.content_hash()


def test_reciprocal_rank_fusion_order_by_hand():
    # lexical: paper 1, 2, 3; dense: paper 3, 4, 1 (chunk ids = paper id * 10).
    lexical = [ChunkHit(10, 1, 9.0), ChunkHit(20, 2, 5.0), ChunkHit(30, 3, 1.0)]
    dense = [ChunkHit(30, 3, 0.9), ChunkHit(40, 4, 0.8), ChunkHit(11, 1, 0.7)]
    settings = CorpusSettings(rrf_k=10, lexical_weight=1.0, dense_weight=1.0)
    ranked = fuse(lexical, dense, settings, limit=10)
    # paper 1: 1/11 + 1/13 = .1678; paper 3: 1/13 + 1/11 = .1678 (tie -> lower id); paper 2: 1/12; paper 4: 1/12
    assert [r.paper_id for r in ranked] == [1, 3, 2, 4]
    assert ranked[0].score == pytest.approx(1 / 11 + 1 / 13)
    assert (ranked[0].lexical_rank, ranked[0].dense_rank) == (1, 3)
    assert ranked[0].chunk_id == 10  # chunk 10 (1/11) beats chunk 11 (1/13) as the passage
    dense_heavy = fuse(lexical, dense, CorpusSettings(rrf_k=10, dense_weight=3.0), limit=2)
    assert [r.paper_id for r in dense_heavy] == [3, 1]


def test_paper_aggregation_uses_the_best_chunk():
    hits = [ChunkHit(5, 2, 0.9), ChunkHit(6, 1, 0.8), ChunkHit(7, 2, 0.7)]
    ranked = rank_papers(hits, 10, "dense")
    assert [(r.paper_id, r.chunk_id, r.dense_rank) for r in ranked] == [(2, 5, 1), (1, 6, 2)]
