"""`research-engine`: run the embedded stack, the demo, migrations and the corpus tools."""

from __future__ import annotations

import asyncio
import json
import signal
import textwrap
import time
from pathlib import Path
from typing import Annotated, Any, cast

import httpx
import typer

from research_engine import client_cli, mcp_cli
from research_engine.corpus_cli import corpus_app
from research_engine.keys_cli import keys_app
from research_engine.llm_cli import llm_app
from research_engine.local_key import key_path
from research_engine.stack import Stack, ensure_embedded_database
from research_platform.embedded import free_port
from research_platform.settings import get_settings

app = typer.Typer(
    help="research-engine: a living ledger of evidence-backed claims.", no_args_is_help=True
)
DEMO_DIR = Path(__file__).parent / "demo_data"
TERMINAL = {"active", "rejected", "superseded", "critic_quarantine"}

DataDir = Annotated[Path | None, typer.Option("--data-dir", help="Embedded servers' data folder.")]


def _data_dir(value: Path | None) -> Path:
    return (value or get_settings().data_dir).resolve()


@app.command()
def up(
    port: Annotated[
        int | None, typer.Option(help="Gateway port (default GATEWAY_PORT or 8080).")
    ] = None,
    data_dir: DataDir = None,
    cluster: Annotated[
        bool,
        typer.Option(
            "--cluster", help="Embedded NATS as a 3-node JetStream cluster (streams at R3)."
        ),
    ] = False,
) -> None:
    """Start NATS, Postgres (embedded unless NATS_URL / DATABASE_URL) and every service; Ctrl-C stops all."""
    stack = Stack(
        _data_dir(data_dir), gateway_port=port or get_settings().gateway_port, cluster=cluster
    )
    stopping = False

    def _stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    try:
        stack.start_servers()
        typer.echo(f"nats      {stack.nats_url}\npostgres  {stack.database_url}")
        stack.start_services()
        stack.wait_ready()
        typer.echo(
            f"gateway   {stack.gateway_url}  (OpenAPI: {stack.gateway_url}/docs)\nlogs      {stack.logs_dir}"
        )
        made = "created now" if stack.admin_key_created else "kept from an earlier start"
        typer.echo(
            f"admin key {stack.admin_key}  ({made}; stored in {key_path(stack.data_dir)}, mode 0600)"
        )
        typer.echo(
            f"console   {stack.console_url()}  (a single-use sign-in code: expires in minutes)"
        )
        typer.echo(
            "          send the key as `X-API-Key: <key>`; `research-engine keys create` makes keys for others."
        )
        typer.echo("research-engine is up; Ctrl-C stops everything.")
        while not stopping:
            for name in stack.check_processes():
                typer.echo(f"service {name} exited; restarted it", err=True)
            time.sleep(0.5)
    finally:
        typer.echo("stopping…")
        stack.stop()
        typer.echo("stopped.")


@app.command()
def migrate(data_dir: DataDir = None) -> None:
    """Bring the database (DATABASE_URL or the embedded one) to the latest schema."""
    url = ensure_embedded_database(_data_dir(data_dir))
    typer.echo(f"migrated {url}")


@app.command()
def demo(
    data_dir: DataDir = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for every verdict.")] = 300.0,
) -> None:
    """Bring the stack up, ingest the bundled SciFact excerpt, ask real questions, print the claims."""
    from research_corpus.ingest import ingest_path
    from research_engine.models import configure_models
    from research_platform.db import create_engine, session_factory

    configure_models()
    questions = json.loads((DEMO_DIR / "questions.json").read_text())
    stack = Stack(_data_dir(data_dir), gateway_port=free_port())
    started = time.monotonic()
    with stack:
        typer.echo(f"stack up (nats {stack.nats_url}); ingesting the demo corpus…")

        async def _ingest() -> object:
            engine = create_engine(stack.database_url)
            try:
                return await ingest_path(
                    session_factory(engine),
                    DEMO_DIR / "scifact_demo.jsonl",
                    fmt="scifact",
                    settings=get_settings().corpus,
                )
            finally:
                await engine.dispose()

        report = asyncio.run(_ingest())
        typer.echo(f"corpus: {report}")
        stack.wait_ready()
        with httpx.Client(
            base_url=stack.gateway_url, timeout=30, headers=stack.api_headers
        ) as client:
            task_ids = []
            for item in questions:
                reply = client.post(
                    "/api/research/v1/tasks",
                    json={"question": item["question"], "entity": item.get("entity")},
                )
                reply.raise_for_status()
                task_ids.append(reply.json()["task_id"])
            views = _await_claims(client, task_ids, timeout)
            for view in views:
                _print_task(view)
            _demo_source_list(client, timeout)
            _demo_review(client, timeout)
            _demo_verification(client, timeout)
    failed = sum(1 for view in views if view["status"] == "failed")
    summary = f"; {failed} of {len(views)} tasks failed (reasons above)" if failed else ""
    typer.echo(
        f"demo finished in {time.monotonic() - started:.1f}s{summary}; the stack is stopped."
    )


def _await_claims(
    client: httpx.Client, task_ids: list[str], timeout: float
) -> list[dict[str, Any]]:
    """The views of `task_ids` once each has a decided claim or has `failed` (a dead-lettered task)."""
    deadline = time.monotonic() + timeout
    done: dict[str, dict[str, Any]] = {}
    while len(done) < len(task_ids):
        if time.monotonic() > deadline:
            typer.echo(
                f"timed out waiting for verdicts ({len(done)}/{len(task_ids)} done)", err=True
            )
            raise typer.Exit(1)
        for task_id in task_ids:
            if task_id in done:
                continue
            view = client.get(f"/api/research/v1/tasks/{task_id}").json()
            claim = view.get("claim")
            if (claim and claim["status"] in TERMINAL) or view["status"] == "failed":
                done[task_id] = view
        time.sleep(0.5)
    return [done[t] for t in task_ids]


def _demo_source_list(client: httpx.Client, timeout: float) -> None:
    """One short source list over the local corpus (a `demo` workspace whose only API is the corpus)."""
    limits = {"allowed_apis": ["corpus"], "max_references": 5}
    client.put("/api/research/v1/source-lists/limits/demo", json=limits).raise_for_status()
    accepted = client.post(
        "/api/research/v1/source-lists",
        json={
            "prompt": "Does exercise training improve quality of life in chronic heart failure?",
            "workspace": "demo",
            "num_references": 3,
            "detail_level": "facts_list",
        },
    )
    accepted.raise_for_status()
    list_id = accepted.json()["source_list_id"]
    deadline = time.monotonic() + timeout
    while (reply := client.get(f"/api/research/v1/source-lists/{list_id}")).status_code == 409:
        if time.monotonic() > deadline or reply.json()["detail"].get("status") == "failed":
            typer.echo(f"source list not built: {reply.json()['detail']}")
            return
        time.sleep(0.5)
    reply.raise_for_status()
    found = reply.json()
    typer.echo("\n" + "=" * 100)
    count = len(found["sources"])
    typer.echo(
        f"Source list ({found['detail_level']}, keywords {', '.join(found['keywords'])}): "
        f"{count} source{'' if count == 1 else 's'}"
    )
    if found.get("note"):  # an empty list says why
        typer.echo(found["note"])
    for n, source in enumerate(found["sources"], 1):
        year = f" ({source['date'][:4]})" if source["date"] else ""
        link = " · ".join(
            dict.fromkeys(x for x in (source.get("origin_id"), source["url"]) if x)
        )  # what a reader follows
        typer.echo(
            textwrap.fill(
                f"[{n}] {source['title']}{year} — {link} — relevance {source['relevance_score']:.2f}",
                width=100,
                subsequent_indent="    ",
            )
        )
        for fact in (source["facts"] or [])[:2]:
            typer.echo(
                textwrap.fill(
                    f"- [{fact['confidence']}] {fact['statement']}",
                    width=100,
                    initial_indent="    ",
                    subsequent_indent="      ",
                )
            )


# The excerpt holds one trial of exercise in heart failure (HF-ACTION: the verification's evidence), so a
# review of that topic can only report single-paper findings; this subject has two papers that agree.
DEMO_REVIEW_TOPIC = (
    "neutrophil extracellular traps and citrullinated autoantigens in rheumatoid arthritis"
)


def _demo_run(
    client: httpx.Client, collection: str, body: dict[str, Any], what: str, timeout: float
) -> dict[str, Any] | None:
    """Start a `what` (a review, a verification) with `POST /{collection}` and wait for it: its
    finished view, or None (said on the terminal) when it failed or ran past `timeout` seconds."""
    accepted = client.post(f"/api/research/v1/{collection}", json=body)
    accepted.raise_for_status()
    record_id = accepted.json()[f"{what}_id"]
    deadline = time.monotonic() + timeout
    while (view := client.get(f"/api/research/v1/{collection}/{record_id}").json())[
        "status"
    ] == "running":
        if time.monotonic() > deadline:
            typer.echo(f"{what} {record_id} still running after {timeout:.0f}s")
            return None
        time.sleep(1.0)
    typer.echo("\n" + "=" * 100)
    if view["status"] == "failed":
        typer.echo(f"{what.capitalize()} failed: {view['error']}")
        return None
    return cast(dict[str, Any], view)


def _demo_review(client: httpx.Client, timeout: float) -> None:
    """One short literature review (one round) over the demo corpus: verdict, tag mix, citation check."""
    view = _demo_run(
        client, "reviews", {"topic": DEMO_REVIEW_TOPIC, "max_iterations": 1}, "review", timeout
    )
    if view is None:
        return
    review_id = view["review_id"]
    tags: dict[str, int] = {}
    for claim in view["claims"]:
        tags[claim["tag"]] = tags.get(claim["tag"], 0) + 1
    check = view["citation_check"]
    typer.echo(
        f'Review of "{DEMO_REVIEW_TOPIC}" ({view["iterations"]} round, {len(view["report"]["references"])} references): {view["verdict"]}; '
        f"tags {', '.join(f'{t} {n}' for t, n in sorted(tags.items()))}; citation check: {len(check['unknown_ids'])} unknown, "
        f"{check['unsupported']} unsupported, {check['uncited']} uncited, accuracy {check['citation_accuracy']:.2f}, "
        f"grounding {check['grounding']:.2f}"
    )
    report = view["report"]
    titles = {r["id"]: r["title"] for r in report["references"]}
    key: dict[str, Any] = next(
        (s for s in report["sections"] if s["title"] == "Key Findings"), {"findings": []}
    )
    for finding in key["findings"][:3]:
        cited = "; ".join(titles.get(c, f"[{c}]").rstrip(".") for c in finding["citations"][:2])
        typer.echo(
            textwrap.fill(
                f"[{finding['tag']}] {finding['statement']} — {cited}",
                width=100,
                initial_indent="  ",
                subsequent_indent="    ",
            )
        )
    typer.echo(f"  full report: research-engine export {review_id} --format md")


def _demo_verification(client: httpx.Client, timeout: float) -> None:
    """One short claim verification over the demo corpus: verdict · confidence and the evidence counts."""
    claim = "Exercise training improves quality of life in patients with chronic heart failure"
    view = _demo_run(client, "verifications", {"claim": claim}, "verification", timeout)
    if view is None:
        return
    verification_id = view["verification_id"]
    a = view["assessment"]
    typer.echo(
        f"Verification: {claim}\n  {view['verdict']} · {view['confidence']} ({a['supporting_sources']} supporting, "
        f"{a['contradicting_sources']} contradicting, {a['qualifying_sources']} qualifying sources)"
    )
    report = view["report"]
    titles = {r["id"]: r["title"] for r in report["references"]}
    for section in report["sections"]:
        if (
            section["title"]
            in ("Corroborating Evidence", "Contradicting Evidence", "Nuances and Conditions")
            and section["findings"]
        ):
            finding = section["findings"][0]
            cited = "; ".join(titles.get(c, f"[{c}]").rstrip(".") for c in finding["citations"][:1])
            holds = (finding.get("group") or "").partition(" — holds ")[
                2
            ]  # a qualifying passage's conditions
            typer.echo(
                textwrap.fill(
                    f'{section["title"]}: "{finding["statement"]}" — {cited}'
                    + (f" (holds {holds})" if holds else ""),
                    width=100,
                    initial_indent="  ",
                    subsequent_indent="    ",
                )
            )
    typer.echo(f"  full report: research-engine export {verification_id} --format md")


def _print_task(view: dict[str, Any]) -> None:
    def wrap(text: str, indent: str) -> str:
        return textwrap.fill(text, width=100, initial_indent=indent, subsequent_indent=indent)

    typer.echo("\n" + "=" * 100)
    typer.echo(wrap(f"Q: {view['question']}", ""))
    claim = view.get("claim")
    if not claim:
        typer.echo(f"  task {view['status']}: {view.get('error')}")
        return
    typer.echo(
        wrap(
            f"Claim [{claim['status'].upper()}] (confidence {claim['confidence']:.2f}, {claim['model']}): {claim['statement']}",
            "  ",
        )
    )
    for n, support in enumerate(claim["supports"], 1):
        typer.echo(wrap(f"[{n}] {support['source_id']} — {support['title']}", "    "))
        typer.echo(wrap(f"“{support['quote']}”", "        "))
    verdict = claim.get("verdict")
    if verdict:
        typer.echo(
            wrap(
                f"Critic: {verdict['verdict']} (score {verdict['score']:.2f}, {verdict['model']}) — {verdict['reasoning']}",
                "  ",
            )
        )


client_cli.register(app)  # ask, verify, review, sources, watch, claims, findings, export, logs
app.add_typer(corpus_app, name="corpus", help="Ingest, search and analyse the local corpus.")
app.add_typer(keys_app, name="keys", help="Issue, list and revoke API keys.")
app.add_typer(llm_app, name="llm", help="Check the configured LLM provider (docs/local-models.md).")
app.command("mcp")(mcp_cli.mcp)


if __name__ == "__main__":
    app()
