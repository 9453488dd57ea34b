"""Integration: `research-engine corpus …` as a user runs it (a separate process, real database)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus.conftest import write_jsonl

pytestmark = pytest.mark.integration
CLI = [sys.executable, "-m", "research_engine.cli", "corpus"]


def _run(args: list[str], database_url: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    return subprocess.run(
        [*CLI, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=900, check=False
    )


async def test_cli_ingest_reports_malformed_line_and_exits_nonzero_then_batch_search_writes_a_run_file(
    empty_corpus, corpus_database_url, small_corpus, tmp_path
):
    papers = [json.loads(line) for line in small_corpus.read_text().splitlines()]
    bad = write_jsonl(tmp_path / "bad.jsonl", [papers[0], '{"id": "x", "title": ', *papers[1:]])
    result = _run(
        ["ingest", str(bad), "--format", "jsonl", "--no-progress"], corpus_database_url, tmp_path
    )
    assert result.returncode == 1, result.stderr
    assert f"{bad}: line 2: invalid JSON" in result.stderr
    assert "6 added" in result.stdout

    queries = write_jsonl(
        tmp_path / "queries.jsonl",
        [
            {"_id": "q1", "text": "aspirin and heart attacks"},
            {"_id": "q2", "text": "statins lower cholesterol"},
        ],
    )
    run_file = tmp_path / "run.tsv"
    result = _run(
        [
            "search",
            "--queries",
            str(queries),
            "--k",
            "3",
            "--mode",
            "hybrid",
            "--out",
            str(run_file),
        ],
        corpus_database_url,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    lines = run_file.read_text().splitlines()
    assert lines[0] == "query-id\tcorpus-id\trank\tscore"
    rows = [line.split("\t") for line in lines[1:]]
    assert len(rows) == 6 and all(len(r) == 4 for r in rows)
    assert [(r[0], r[2]) for r in rows] == [
        ("q1", "1"),
        ("q1", "2"),
        ("q1", "3"),
        ("q2", "1"),
        ("q2", "2"),
        ("q2", "3"),
    ]
    assert (
        rows[0][1] == "aspirin-mi" and rows[3][1] == "statin-ldl"
    )  # corpus-id = the id in the ingested file
    scores = [float(r[3]) for r in rows[:3]]
    assert scores == sorted(scores, reverse=True)

    again = _run(["ingest", str(small_corpus), "--no-progress"], corpus_database_url, tmp_path)
    assert again.returncode == 0 and "0 added, 0 updated, 6 unchanged" in again.stdout
