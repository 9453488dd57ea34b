"""bench:scale's machinery at a tiny size: the distractor generator's guarantees (unit) and one
whole run of bench/scale.py on 200 distractors (integration: embedded PostgreSQL, the model)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench.scale_corpus import (
    DATA,
    Distractors,
    gold_ids,
    perturbed,
    scifact_records,
    sentence_mean,
)

REPO = Path(__file__).resolve().parents[2]

needs_data = pytest.mark.skipif(
    not (DATA / "corpus.jsonl").exists(),
    reason="the SciFact data (../shared/data/scifact) is absent",
)
LINE = re.compile(
    r"^bench:scale papers=(\d+) distractors=(\d+) vectors=(\w+) load_per_s=(\d+) .*"
    r"bytes_per_paper=(\d+) .*search_p95_ms=([\d.]+) .*recall100=([\d.]+) .*"
    r"ndcg10=([\d.]+) ndcg10_base=([\d.]+)$"
)


@pytest.fixture(scope="module")
def generator() -> Distractors:
    return Distractors(seed=0)


@needs_data
@pytest.mark.unit
def test_distractors_are_deterministic_and_never_gold_or_verbatim(generator: Distractors) -> None:
    papers = list(generator.papers(0, 300))
    assert papers == list(Distractors(seed=0).papers(0, 300))  # same seed, same corpus
    assert papers[:5] != list(Distractors(seed=1).papers(0, 5))
    assert generator.paper(250) == papers[250]  # paper i does not depend on the ones before it
    sentences, verbatim, gold_left = generator.verbatim_check(papers)
    assert sentences > 2000 and verbatim == 0 and gold_left == 0
    gold = gold_ids()
    assert len(gold) > 600
    gold_titles = {r["title"] for r in scifact_records() if str(r["doc_id"]) in gold}
    assert len(generator.pool) > 4000
    assert not {title for title, _ in generator.pool} & gold_titles
    assert all(p["title"] and len(p["abstract"]) >= 1 for p in papers)


@pytest.mark.unit
def test_perturbed_vectors_are_unit_and_close_to_their_source() -> None:
    rng = np.random.default_rng(0)
    source = rng.normal(size=(50, 384)).astype(np.float32)
    source /= np.linalg.norm(source, axis=1, keepdims=True)
    out = perturbed(source, 120, key=7)
    assert out.shape == (120, 384)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    cosine = np.max(out @ source.T, axis=1)
    assert 0.8 < cosine.mean() < 0.97
    assert np.array_equal(out, perturbed(source, 120, key=7))


@needs_data
@pytest.mark.integration
def test_bench_scale_runs_at_a_tiny_size(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"  # not the committed bench/results.jsonl
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "BENCH_RESULTS": str(results),
    }
    database = tmp_path / "db"
    run = subprocess.run(
        [
            sys.executable,
            "bench/scale.py",
            "--papers",
            "200",
            "--queries",
            "3",
            "--scifact-sample",
            "20",
            "--vectors",
            "perturbed",
            "--cache",
            str(tmp_path / "cache"),
            "--data-dir",
            str(database),
        ],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    lines = run.stdout.strip().splitlines()
    assert re.search(
        r"distractors: generated 200 .* 0 verbatim SciFact sentences, 0 gold", run.stdout
    )
    final = next(line for line in lines if line.startswith("bench:scale "))
    match = LINE.match(final)
    assert match, final
    papers, distractors = int(match[1]), int(match[2])
    assert [json.loads(row)["summary"] for row in results.read_text().splitlines()] == [final]
    assert distractors == 200 and papers > 200  # SciFact's sample is inside
    assert int(match[5]) > 0 and float(match[6]) > 0
    # the gold papers of the 3 queries are among ~225 papers: the engine must find them
    assert float(match[7]) > 0.5 and 0 < float(match[9]) <= 1
    assert "hardness: P(synthetic distractor outranks gold)" in run.stdout
    assert re.search(r"search cold \(hybrid.*p50 [\d.]+ ms p95 [\d.]+ ms", run.stdout)
    assert re.search(r"search warm \(hybrid.*p50 [\d.]+ ms p95 [\d.]+ ms", run.stdout)
    assert re.search(r"PostgreSQL RSS \d+ MiB, PSS \d+ MiB \(\d+ processes\)", run.stdout)
    assert lines[-1] == f"database folder {database} deleted" and not database.exists()


@needs_data
@pytest.mark.unit
def test_sentence_mean_vectors_average_each_chunks_source_sentences(
    generator: Distractors,
) -> None:
    from research_corpus.records import chunk_paper, parse_scifact
    from research_corpus.sentences import sentence_key

    papers = list(generator.papers(0, 20))
    rng = np.random.default_rng(1)
    vectors = {
        sentence_key(s): rng.normal(size=384).astype(np.float32)
        for p in papers
        for s in p["sources"]
    }
    chunks = [[c.text for c in chunk_paper(parse_scifact(p, 0), 60)] for p in papers]
    assert any(len(c) > 1 for c in chunks)  # small chunks: papers of several chunks are covered
    out = sentence_mean(papers, chunks, vectors)
    assert out.shape == (sum(map(len, chunks)), 384)
    # the first chunk of the first paper, by hand
    first = chunks[0][0]
    n = next(k for k in range(1, 99) if " ".join(papers[0]["abstract"][:k]) == first)
    mean = np.mean([vectors[sentence_key(s)] for s in papers[0]["sources"][:n]], axis=0)
    assert np.allclose(out[0], mean / np.linalg.norm(mean), atol=1e-6)


@needs_data
@pytest.mark.integration
def test_bench_scale_resumes_at_its_first_unfinished_phase(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "BENCH_RESULTS": str(results),
    }
    database = tmp_path / "db"
    common = [
        sys.executable,
        "bench/scale.py",
        "--papers",
        "200",
        "--queries",
        "3",
        "--scifact-sample",
        "20",
        "--vectors",
        "perturbed",
        "--cache",
        str(tmp_path / "cache"),
        "--data-dir",
        str(database),
    ]

    def bench(*extra: str) -> str:
        run = subprocess.run(
            [*common, *extra],
            check=False,
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        return run.stdout

    first = bench("--stop-after", "load")
    assert "phase load: stopping here (--stop-after); run again to resume" in first
    assert "load profile (seconds by step" in first and "copy" in first
    assert first.strip().splitlines()[-1] == f"database folder {database} kept"
    state = json.loads((database / "bench-scale.json").read_text())
    assert set(state["phases"]) == {"scifact", "base", "load"}
    assert state["phases"]["load"]["loaded"] == 200
    assert not results.exists()  # no summary yet: the run has not finished
    other = subprocess.run(
        [*common[:3], "300", *common[4:]],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert other.returncode != 0 and "holds a run with other parameters" in other.stderr

    second = bench("--keep", "--migrations")
    for phase in ("scifact", "base", "load"):
        assert f"phase {phase}: finished earlier, skipped" in second
    assert "phase index" not in second and "index build (HNSW" in second  # the rest ran
    steps = re.findall(
        r"^migrations: (\w+(?: \w+)? \w+) in [\d.]+ s, database \d+ MB", second, re.MULTILINE
    )
    assert steps == [
        "downgrade 0019",
        "downgrade 0018",
        "upgrade 0019",
        "upgrade 0020",
        "vacuum full corpus_chunks",
    ]
    assert "distractors loaded earlier" not in second and "scifact: 2" not in second
    final = next(line for line in second.splitlines() if line.startswith("bench:scale "))
    assert LINE.match(final), final
    assert [json.loads(row)["summary"] for row in results.read_text().splitlines()] == [final]

    third = bench()  # everything finished: the same figures, nothing measured again or recorded
    for phase in ("scifact", "base", "load", "index", "cold", "warm"):
        assert f"phase {phase}: finished earlier, skipped" in third
    assert final in third.splitlines()
    assert len(results.read_text().splitlines()) == 1
    assert third.strip().splitlines()[-1] == f"database folder {database} deleted"
    assert not database.exists()
