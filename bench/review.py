"""Literature-review quality on SciFact, on the full corpus through the HTTP API (`task bench:review`).

Topics are SciFact **train** claims of the held-out fold — claim index mod 5 == 0, the fold the
shipped judgement models were not trained on (docs/judgement.md) — that have annotated evidence
(102; `--split dev`: the dev claims with evidence, run once per shipped setup), each stated as a
topic (its content words in order: "ALDH1 expression associated poorer prognosis breast cancer").
A topic's gold papers are the abstracts its claim cites with evidence; their rationale sentences
are the annotation. As a user's request runs: the whole SciFact corpus (5,183 abstracts) from the
cached data folder (`bench/full_corpus.py`, `--data-dir`), the stack as separate processes
(connector, reviewer, gateway; embedded nats-server and PostgreSQL on that folder), each review
asked for through `POST /api/research/v1/reviews` and read back by `GET …/reviews/{id}` — the
reviewer service's own loop (author → peer reviewer, ≤ 2 rounds) over the connector's corpus tools.

Per review, over its key findings (their lead quotes):
- gold_findings — share of topics with a key finding from a gold paper (target ≥ 0.7);
- evidence_precision — of the findings quoted from a gold (annotated) abstract, the share that are
  annotated rationale sentences (a random sentence of such an abstract is one about 20 % of the
  time; target ≥ 0.8);
- findings per review, PASS rate, tag mix, seconds per review (submit → readable, one at a time;
  target ≤ 30 s).
Prints a row per review, the means, and last the line:

    bench:review gold_findings=… evidence_precision=… findings_per_review=… s_per_review=… topics=… corpus=5183

`--env KEY=VALUE` sets a service setting for the run (e.g. `REVIEWER__JUDGE=chain`).
`--smoke-subset N` is a SMOKE TEST only, not the benchmark: the gold papers plus N random
abstracts in a throw-away database, the service's loop in process (no stack).

    .venv/bin/python bench/review.py [--split train|dev] [--topics N] [--data-dir DIR] [--env K=V] [--smoke-subset N] [--show N]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.corpus_database import require_scifact
from bench.harness.results import print_summary
from bench.harness.scifact_options import add_env, add_split, service_env
from research_judgement.coverage import STOP

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "scifact"
WARM_UP = "vitamin D supplementation and fracture risk in older adults"  # loads the models; not a SciFact claim, not scored
WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]+")


def held_out_topics(data: Path, wanted: int, split: str = "train") -> list[dict]:
    """The claims with annotated evidence of `split` (train: fold 0, index mod 5 == 0), in file order, as topics; 0 = all."""
    claims = [json.loads(line) for line in (data / f"claims_{split}.jsonl").open() if line.strip()]
    topics = []
    for index, claim in enumerate(claims):
        if (split == "train" and index % 5) or not claim["evidence"]:
            continue
        rationales = {
            doc: sorted({i for ev in sets for i in ev["sentences"]})
            for doc, sets in claim["evidence"].items()
        }
        topics.append(
            {
                "claim": claim["claim"],
                "topic": topic_of(claim["claim"]),
                "gold": sorted(rationales),
                "rationales": rationales,
            }
        )
        if len(topics) == wanted:
            break
    return topics


def topic_of(claim: str) -> str:
    """A claim stated as a topic: its words without function words and negations, in order."""
    words = [w for w in WORD.findall(claim) if w.lower() not in STOP]
    return " ".join(words)


def matching_sentence(quote: str, sentences: list[str]) -> int | None:
    """The index of the abstract sentence a quote is (best word overlap, at least half), else None."""
    mine = {w.lower() for w in WORD.findall(quote)}
    best, index = 0.0, None
    for i, sentence in enumerate(sentences):
        theirs = {w.lower() for w in WORD.findall(sentence)}
        score = len(mine & theirs) / max(len(mine | theirs), 1)
        if score > best:
            best, index = score, i
    return index if best >= 0.5 else None


class LocalTools:
    """The connector's corpus tools, called in process (same code the service answers with)."""

    def __init__(self, tools) -> None:
        self.tools = tools

    async def call(self, tool, request):
        from research_modes import ToolsUnavailable

        reply = await self.tools.answer(tool, request)
        if reply.error:
            raise ToolsUnavailable(reply.error)
        return reply.result

    async def outside(self, query, sources, limit):
        from research_contracts import EvidenceFound

        return EvidenceFound()


def accuracy(check) -> float:
    """Checked-out citations and quotes over all of them, unknown ids counted as failures."""
    total = check.citations + check.quotes + check.unknown
    return 1.0 if total == 0 else (check.supported_citations + check.verbatim_quotes) / total


def lead_quotes(report: dict) -> tuple[list[tuple[str, str]], set[str]]:
    """(SciFact doc id, lead quote) of each key finding of a report (its JSON), and the cited doc ids."""
    refs = {r["id"]: r for r in report.get("references", [])}
    leads = []
    for section in report.get("sections", []):
        if section.get("title") != "Key Findings":
            continue
        for finding in section.get("findings", []):
            quotes = finding.get("quotes") or []
            if quotes and quotes[0]["reference_id"] in refs:
                leads.append(
                    (
                        (refs[quotes[0]["reference_id"]].get("paper_id") or "").removeprefix(
                            "corpus:"
                        ),
                        quotes[0]["text"],
                    )
                )
    return leads, {(r.get("paper_id") or "").removeprefix("corpus:") for r in refs.values()}


def stack_reviews(args: argparse.Namespace) -> tuple[list[dict], int]:
    """The benchmark: every review through the real stack on the cached full corpus."""
    sys.path.insert(0, str(REPO / "bench"))
    from full_corpus import full_corpus_gateway

    abstracts = {
        str(json.loads(line)["doc_id"]): json.loads(line)["abstract"]
        for line in (args.data / "corpus.jsonl").open()
    }
    topics = held_out_topics(args.data, args.topics, args.split)
    env = service_env(args.env)
    rows = []
    services = ("connector", "reviewer", "gateway")
    with full_corpus_gateway(args.data_dir, services, env) as (client, papers):
        warm = client.post(
            "/api/research/v1/reviews", json={"topic": WARM_UP, "max_iterations": 1}
        ).json()["review_id"]
        while (
            client.get(f"/api/research/v1/reviews/{warm}").json()["status"] == "running"
        ):  # models load: not timed
            time.sleep(0.5)
        for n, topic in enumerate(topics, start=1):
            t0 = time.perf_counter()
            accepted = client.post(
                "/api/research/v1/reviews", json={"topic": topic["topic"], "max_iterations": 2}
            )
            if (
                400 <= accepted.status_code < 500
            ):  # refused (a topic the gateway will not take): it counts, as nothing found
                view: dict[str, Any] = {
                    "status": f"refused {accepted.status_code}: {str(accepted.json().get('detail'))[:120]}"
                }
            else:
                accepted.raise_for_status()
                review_id = accepted.json()["review_id"]
                while True:
                    time.sleep(0.25)
                    view = client.get(f"/api/research/v1/reviews/{review_id}").json()
                    if view["status"] != "running" or time.perf_counter() - t0 > args.timeout:
                        break
            seconds = time.perf_counter() - t0
            report = view.get("report") or {}
            leads, cited = lead_quotes(report)
            annotated = [(d, q) for d, q in leads if d in topic["rationales"]]
            hits = [
                matching_sentence(q, abstracts[d]) in topic["rationales"][d] for d, q in annotated
            ]
            tags = collections.Counter(
                f.get("tag")
                for s in report.get("sections", [])
                if s.get("title") == "Key Findings"
                for f in s.get("findings", [])
            )
            row = {
                "topic": topic["topic"],
                "seconds": seconds,
                "findings": len(leads),
                "status": view["status"],
                "gold_finding": any(d in topic["gold"] for d, _ in leads),
                "annotated": len(annotated),
                "rationale_hits": sum(hits),
                "pass": view.get("verdict") == "PASS",
                "tags": dict(tags),
                "coverage": len(cited & set(topic["gold"])) / len(topic["gold"]),
                "strays": [d for d, _ in leads if d not in topic["gold"]],
            }
            rows.append(row)
            print(
                f"[{n:3}/{len(topics)}] {row['topic'][:58]:58} findings {len(leads)} gold {'yes' if row['gold_finding'] else 'no ':3} "
                f"rationale {sum(hits)}/{len(annotated)} {view.get('verdict') or view['status']:15} {seconds:5.1f}s {dict(tags)}",
                flush=True,
            )
            if n <= args.show and view.get("markdown"):
                print(view["markdown"])
    return rows, papers


async def run(args: argparse.Namespace, database_url: str, nats_url: str) -> list[dict]:
    """SMOKE TEST only: the gold papers plus `--smoke-subset` random abstracts, the loop in process."""
    import nats

    from research_connector.corpus_tools import CorpusTools
    from research_contracts.reviews import RequestReview
    from research_corpus.ingest import ingest_path
    from research_judgement import get_judge
    from research_llm.offline.relevance import Relevance, default_encoder
    from research_platform.db import create_engine, session_factory
    from research_platform.settings import get_settings
    from research_reviewer.author import OfflineAuthor
    from research_reviewer.experiment import review_loop
    from research_reviewer.judged import off_topic
    from research_reviewer.peer_review import PeerReviewer
    from research_reviewer.prepare import review_job
    from research_reviewer.settings import ReviewerSettings
    from research_runs import RunRecorder, ensure_runs_stream

    docs = {str(json.loads(line)["doc_id"]): line for line in (args.data / "corpus.jsonl").open()}
    abstracts = {d: json.loads(line)["abstract"] for d, line in docs.items()}
    topics = [
        t
        for t in held_out_topics(args.data, args.topics, args.split)
        if all(g in docs for g in t["gold"])
    ]
    gold = sorted({g for t in topics for g in t["gold"]})
    rest = sorted(set(docs) - set(gold))
    chosen = gold + random.Random(7).sample(rest, min(args.smoke_subset, len(rest)))
    subset = Path(args.work) / "review_corpus.jsonl"
    subset.write_text(
        "".join(docs[d] if docs[d].endswith("\n") else docs[d] + "\n" for d in chosen)
    )

    engine = create_engine(database_url)
    sessions = session_factory(engine)
    started = time.perf_counter()
    ingested = await ingest_path(sessions, subset, fmt="scifact", progress=not args.quiet)
    print(
        f"corpus: {len(chosen)} SciFact abstracts ({len(gold)} gold of {len(topics)} topics + {len(chosen) - len(gold)} "
        f"distractors); ingest {ingested.added} added / {ingested.unchanged} unchanged in {time.perf_counter() - started:.0f} s"
    )

    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await ensure_runs_stream(js)
    port = LocalTools(CorpusTools(lambda: sessions, get_settings().corpus))
    relevance = Relevance(default_encoder())
    relevance.embed(["warm up"])
    judge = get_judge()
    for name in ("relevance", "pair"):
        judge.model(name)
    settings = (
        ReviewerSettings()
        if args.admit_floor is None
        else ReviewerSettings(admit_floor=args.admit_floor)
    )
    rows = []
    for n, topic in enumerate(topics, start=1):
        job = review_job(
            RequestReview(
                topic=topic["topic"], max_iterations=2, run_id=f"bench-{n}-{int(time.time())}"
            )
        )
        recorder = RunRecorder(js, job.run_id)
        t0 = time.perf_counter()
        async with recorder.running():
            outcome = await review_loop(
                job,
                OfflineAuthor(relevance, settings, judge),
                PeerReviewer(settings.spot_checks, cut=settings.cut, judge=judge),
                port,
                recorder,
            )
        seconds = time.perf_counter() - t0
        report = outcome.report
        key = report.section("Key Findings")
        findings = list(key.findings) if key else []
        refs = {r.id: r for r in report.references}
        leads = []  # (SciFact doc id, lead quote, reference) of each key finding
        for finding in findings:
            if finding.quotes and finding.quotes[0].reference_id in refs:
                ref = refs[finding.quotes[0].reference_id]
                leads.append(
                    ((ref.paper_id or "").removeprefix("corpus:"), finding.quotes[0].text, ref)
                )
        annotated = [(d, q) for d, q, _ in leads if d in topic["rationales"]]
        hits = [matching_sentence(q, abstracts[d]) in topic["rationales"][d] for d, q in annotated]
        passages = [(r.title, r.source_text.removeprefix(r.title).strip()) for _, _, r in leads]
        off = sum(off_topic(judge, topic["topic"], passages, settings.cut))
        under = (
            int(
                sum(p < settings.relevance_floor for p in judge.relevance(topic["topic"], passages))
            )
            if passages
            else 0
        )
        cited = {r.paper_id.removeprefix("corpus:") for r in report.references if r.paper_id}
        tags = collections.Counter(f.tag for f in findings)
        row = {
            "topic": topic["topic"],
            "accuracy": accuracy(outcome.check),
            "grounding": outcome.check.grounding,
            "coverage": len(cited & set(topic["gold"])) / len(topic["gold"]),
            "tags": dict(tags),
            "pass1": outcome.rounds[0].review.verdict == "PASS",
            "pass": outcome.verdict == "PASS",
            "rounds": len(outcome.rounds),
            "seconds": seconds,
            "issues": outcome.review.counts(),
            "findings": len(leads),
            "gold_finding": any(d in topic["gold"] for d, _, _ in leads),
            "annotated": len(annotated),
            "rationale_hits": sum(hits),
            "off_topic": off,
            "under_cut": under,
            "strays": [r.title for d, _, r in leads if d not in topic["gold"]],
            "status": outcome.verdict,
        }
        rows.append(row)
        if not args.quiet:
            print(
                f"[{n:2}/{len(topics)}] {row['topic'][:58]:58} findings {len(leads)} gold {'yes' if row['gold_finding'] else 'no ':3} "
                f"rationale {sum(hits)}/{len(annotated)} off {off} under {under} {outcome.verdict:15} r{row['rounds']} {seconds:5.1f}s {dict(tags)}"
            )
            for title in row["strays"]:
                print(f"        not a gold paper: {title[:100]}")
        if n <= args.show:
            print(report.render_markdown())
    await nc.close()
    await engine.dispose()

    mean, mix, findings, annotated, hits, _precision = tally(rows)
    off_rate = sum(r["off_topic"] for r in rows) / findings if findings else 0.0
    print(
        f"\n{len(rows)} reviews (offline engine, ≤ 2 rounds) of held-out SciFact train claims (fold 0) stated as topics"
    )
    print(
        f"key findings {findings} ({findings / len(rows):.1f} per review); {annotated} quoted from gold abstracts, {hits} of "
        f"them annotated rationale sentences; topics with a gold-paper finding {sum(r['gold_finding'] for r in rows)}/{len(rows)}"
    )
    print(
        f"tag mix: {dict(mix)} · PASS after round 1 {mean('pass1'):.2f}, after round 2 {mean('pass'):.2f} · seconds per review "
        f"mean {mean('seconds'):.1f}, p50 {statistics.median(r['seconds'] for r in rows):.1f}, max {max(r['seconds'] for r in rows):.1f}"
    )
    under = sum(r["under_cut"] for r in rows)
    print(
        f"findings from papers under the relevance cut ({settings.relevance_floor}), admitted on a squarely stated finding: "
        f"{under}/{findings}; findings not from a gold paper: {sum(len(r['strays']) for r in rows)}"
    )
    print(
        f"format: citation accuracy {mean('accuracy'):.4f} · grounding {mean('grounding'):.4f} · gold coverage {mean('coverage'):.4f}"
    )
    print(f"SMOKE TEST (off_topic {off_rate:.4f}): not the benchmark")
    return rows


def tally(rows: list[dict]):
    """What both reports print: the mean of a row key, the tag mix, findings, findings quoted from gold
    abstracts, those that are annotated rationales, and their share."""
    mix: collections.Counter[str] = collections.Counter()
    for r in rows:
        mix.update(r["tags"])
    findings = sum(r["findings"] for r in rows)
    annotated = sum(r["annotated"] for r in rows)
    hits = sum(r["rationale_hits"] for r in rows)
    return (
        (lambda key: statistics.fmean(r[key] for r in rows)),
        mix,
        findings,
        annotated,
        hits,
        (hits / annotated if annotated else 0.0),
    )


def summary(rows: list[dict], split: str, papers: int | str, keep: bool = True) -> None:
    """Print the run's figures; `keep` False (a smoke run) leaves bench/results.jsonl as it is."""
    mean, mix, findings, annotated, hits, precision = tally(rows)
    print(
        f"\n{len(rows)} reviews (offline engine, ≤ 2 rounds) of SciFact {split} claims with evidence stated as topics"
    )
    print(
        f"key findings {findings} ({findings / len(rows):.2f} per review); {annotated} quoted from gold abstracts, {hits} of "
        f"them annotated rationale sentences; topics with a gold-paper finding {sum(r['gold_finding'] for r in rows)}/{len(rows)}; "
        f"findings not from a gold paper {sum(len(r['strays']) for r in rows)}; gold coverage {mean('coverage'):.3f}"
    )
    for r in rows:
        if r["status"].startswith("refused"):
            print(f"refused by the gateway: {r['topic'][:90]} — {r['status']}")
    timed = [r["seconds"] for r in rows if not r["status"].startswith("refused")] or [0.0]
    print(
        f"tag mix: {dict(mix)} · PASS {mean('pass'):.2f} · seconds per review mean {statistics.fmean(timed):.1f}, "
        f"p50 {statistics.median(timed):.1f}, max {max(timed):.1f}"
    )
    print(
        "targets: gold_findings ≥ 0.7, evidence_precision ≥ 0.8 (random sentence ≈ 0.2), ≤ 30 s per review"
    )
    print_summary(
        f"bench:review gold_findings={mean('gold_finding'):.4f} evidence_precision={precision:.4f} "
        f"findings_per_review={findings / len(rows):.2f} s_per_review={statistics.fmean(timed):.1f} topics={len(rows)} corpus={papers}",
        keep=keep,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA)
    add_split(parser)
    parser.add_argument(
        "--topics",
        type=int,
        default=0,
        help="the first N claims with evidence of the split (0 = all)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="the cached full-corpus folder (bench/full_corpus.py); "
        "with --smoke-subset, a folder reused between smoke runs",
    )
    add_env(parser)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one review may take")
    parser.add_argument(
        "--smoke-subset",
        type=int,
        help="SMOKE TEST ONLY: the gold papers + N random abstracts, in process",
    )
    parser.add_argument(
        "--admit-floor",
        type=float,
        help="The reviewer's admit_floor (default: its setting; "
        "0.5 = no paper under the relevance cut is admitted).",
    )
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--show", type=int, default=0, help="Print the Markdown of the first N reviews."
    )
    args = parser.parse_args()
    require_scifact(args.data)

    if args.smoke_subset is None:
        rows, papers = stack_reviews(args)
        summary(rows, args.split, papers)
        return

    from research_platform.embedded import EmbeddedNats, EmbeddedPostgres
    from research_platform.migrate import upgrade

    with tempfile.TemporaryDirectory(prefix="re-bench-review-") as tmp:
        folder = args.data_dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        args.work = str(folder)
        pg = EmbeddedPostgres(folder).start()
        bus = EmbeddedNats(folder).start()
        try:
            upgrade(pg.url)
            rows = asyncio.run(run(args, pg.url, bus.url))
            summary(rows, args.split, f"smoke {args.smoke_subset}", keep=False)
        finally:
            bus.stop()
            if not args.data_dir:
                pg.stop()


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
