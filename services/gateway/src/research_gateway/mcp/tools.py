"""The MCP tools: each is a few calls of the gateway's HTTP API (`GatewayApi`), nothing more.

A tool's input schema is the JSON schema of the pydantic model the API route itself validates
(`TaskSubmission`, `VerificationRequest`, `ReviewRequest`, `SourceListRequest`, the ledger's
query parameters), plus the tool's own options (`wait_seconds`); the fields the server sets (a
run id, the origin) are in none of them, and an argument naming one is refused like any unknown
field. The request body is sent to
the API as the assistant wrote it, so the route's validation, de-identification and role check
decide, exactly as for any HTTP client; a refusal comes back as the tool's error with the
route's reason. Long runs follow the run's events and report each as MCP progress.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from research_contracts import ClaimStatus
from research_contracts.reviews import ReviewRequest
from research_contracts.runs import RunEvent
from research_contracts.sourcelists import SourceListRequest
from research_contracts.views import TERMINAL_CLAIM
from research_gateway.mcp.gateway_api import GatewayApi, ToolFailure
from research_gateway.schemas import TaskSubmission
from research_gateway.verifications import VerificationRequest

Progress = Callable[[float, str], Awaitable[None]]
POLL_S = 0.5
KEEP_ALIVE_S = 15.0


class Waiting(BaseModel):
    """The tool's own option: how long to wait for the run before answering with its id."""

    model_config = ConfigDict(extra="forbid")

    wait_seconds: float = Field(
        default=60,
        ge=0,
        le=900,
        description="Wait up to this long for the result (0: answer with the id at once).",
    )


class ReviewId(BaseModel):
    model_config = ConfigDict(extra="forbid")
    review_id: uuid.UUID = Field(description="The id `start_review` answered with.")


class SourceListId(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source_list_id: uuid.UUID = Field(description="The id `build_source_list` answered with.")


class ClaimId(BaseModel):
    model_config = ConfigDict(extra="forbid")
    claim_id: uuid.UUID = Field(
        description="A ledger claim id (from `ask_question` or `search_ledger`)."
    )


class LedgerSearch(BaseModel):
    """`GET /claims` (status, entity) with a text filter on the claims' statements and questions."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(
        default=None,
        max_length=200,
        description="Words that must all occur in the claim "
        "(statement, question or entity), any case.",
        examples=["vitamin D fracture"],
    )
    entity: str | None = Field(
        default=None, max_length=200, description="Only claims about this ledger entity."
    )
    status: ClaimStatus | None = Field(
        default=None, description="Only claims in this state (active = verified)."
    )
    limit: int = Field(default=20, ge=1, le=100)


class FindingsQuery(BaseModel):
    """`GET /findings`: what the periodic agents (correlator, replicator, librarian) found."""

    model_config = ConfigDict(extra="forbid")

    agent: str | None = Field(default=None, max_length=200, examples=["correlator"])
    kind: str | None = Field(default=None, max_length=200, examples=["contradiction"])
    unresolved: bool = False
    limit: int = Field(default=20, ge=1, le=500)


class AskOptions(Waiting):
    wait_seconds: float = Field(
        default=60,
        ge=0,
        le=900,
        description="Wait up to this long for the critic's "
        "verdict; when it has not come, ask again with the answered `task_id` to keep waiting.",
    )


def _validated(model: type[BaseModel], arguments: dict[str, Any]) -> Any:
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        reasons = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
        )
        raise ToolFailure(f"invalid input: {reasons}") from None


def _split(arguments: dict[str, Any], own: type[BaseModel]) -> tuple[Any, dict[str, Any]]:
    """(the tool's own options, validated; the API body, untouched)."""
    mine = {k: v for k, v in arguments.items() if k in own.model_fields}
    return _validated(own, mine), {k: v for k, v in arguments.items() if k not in own.model_fields}


def _schema(body: type[BaseModel] | None, own: type[BaseModel] | None = None) -> dict[str, Any]:
    """The body model's JSON schema with the tool's options added."""
    schema: dict[str, Any] = (
        body.model_json_schema() if body else {"type": "object", "properties": {}}
    )
    schema["properties"] = dict(schema.get("properties", {}))
    schema["required"] = list(schema.get("required", []))
    if own is not None:
        extra = own.model_json_schema()
        schema["properties"].update(extra.get("properties", {}))
        schema["required"] += extra.get("required", [])
        if extra.get("$defs"):
            schema.setdefault("$defs", {}).update(extra["$defs"])
    if not schema["required"]:
        del schema["required"]
    schema["additionalProperties"] = False
    return schema


def describe_event(event: RunEvent) -> str:  # noqa: PLR0911 - a dispatcher: one line per event type
    """One line for a run event, as an assistant's progress message."""
    match event.type:
        case "agent_start":
            return f"{event.agent} started"
        case "reasoning":
            return f"{event.agent}: {event.text[:160]}"
        case "tool_call":
            return f"{event.agent} called {event.tool_id}"
        case "tool_result":
            return (
                f"{event.tool_id} failed: {event.error}"
                if event.error
                else f"{event.tool_id} returned"
            )
        case "tool_progress":
            return f"{event.agent}: {event.message[:160]}"
        case "verdict":
            confidence = f" ({event.confidence})" if event.confidence else ""
            return f"{event.agent} verdict: {event.verdict}{confidence}"
        case "agent_end":
            return f"{event.agent} finished" + ("" if event.ok else " with an error")
        case "result":
            return "result ready"
        case "error":
            return f"error: {event.message[:160]}"
        case "done":
            return f"run {event.status}"
    return event.type


async def follow(api: GatewayApi, run_id: str, seconds: float, progress: Progress) -> str | None:
    """Report the run's events as progress until it is done (its final status) or `seconds` pass (None)."""
    if seconds <= 0:
        return None
    status: str | None = None
    count = 0
    with anyio.move_on_after(seconds):
        async for _, event in api.events(run_id):
            count += 1
            if event.type == "message_chunk":
                continue  # the report's text arrives with the result; chunks would flood the assistant
            await progress(count, describe_event(event))
            if event.type == "done":
                status = event.status
    return status


async def _run(
    api: GatewayApi, path: str, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    """Start a mode's run (`POST path` with the arguments less the tool's `wait_seconds`) and report
    its progress while waiting; the accepted answer (the report's id and the `run_id`)."""
    options, body = _split(arguments, Waiting)
    accepted: dict[str, Any] = await api.call("POST", path, body=body)
    await follow(api, accepted["run_id"], options.wait_seconds, progress)
    return accepted


def _compact_claim(claim: dict[str, Any]) -> dict[str, Any]:
    verdict = claim.get("verdict") or {}
    return {
        "claim_id": claim["claim_id"],
        "statement": claim["statement"],
        "status": claim["status"],
        "confidence": claim["confidence"],
        "entity": claim.get("entity"),
        "question": claim.get("question"),
        "verdict": verdict.get("verdict"),
        "quotes": [
            {
                "quote": s.get("quote"),
                "source_id": s.get("source_id"),
                "title": s.get("title"),
                "locator": s.get("locator"),
            }
            for s in claim.get("supports", [])
        ],
    }


def _evidence(report: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The report's findings with their quotes and the cited papers (title, year, authors)."""
    if not report:
        return []
    refs = {r["id"]: r for r in report.get("references", [])}
    out = []
    for section in report.get("sections", []):
        for finding in section.get("findings", []):
            out.append(
                {
                    "finding": finding.get("statement"),
                    "tag": finding.get("tag"),
                    "quotes": [
                        {
                            "text": q.get("text"),
                            "reference": refs.get(q.get("reference_id"), {}).get("title"),
                        }
                        for q in finding.get("quotes", [])
                    ],
                    "cites": [
                        {k: refs[c].get(k) for k in ("title", "year", "authors", "doi", "paper_id")}
                        for c in finding.get("citations", [])
                        if c in refs
                    ],
                }
            )
    return out


# --- the tools ----------------------------------------------------------------------------------


async def ask_question(
    api: GatewayApi, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    options, body = _split(arguments, AskOptions)
    accepted = await api.call("POST", "/tasks", body=body)
    task_id = accepted["task_id"]
    started = time.monotonic()
    deadline = started + options.wait_seconds
    seen, step, told = "", 0, started
    while True:
        task = await api.call("GET", f"/tasks/{task_id}")
        claim = task.get("claim")
        label = claim["status"] if claim else task["status"]
        if (
            label != seen or time.monotonic() - told >= KEEP_ALIVE_S
        ):  # a quiet stream is dropped by proxies
            step, seen, told = step + 1, label, time.monotonic()
            await progress(step, f"task {label} ({told - started:.0f} s)")
        if task["status"] == "failed":
            return {"task_id": task_id, "status": "failed", "error": task.get("error")}
        if claim and claim["status"] in TERMINAL_CLAIM:
            return {"task_id": task_id, "status": task["status"], "claim": _compact_claim(claim)}
        if time.monotonic() >= deadline:
            return {
                "task_id": task_id,
                "status": label,
                "claim": _compact_claim(claim) if claim else None,
                "next": "not decided yet: call ask_question again with the same question and this task_id to keep waiting",
            }
        await anyio.sleep(POLL_S)


async def verify_claim(
    api: GatewayApi, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    accepted = await _run(api, "/verifications", arguments, progress)
    view = await api.call("GET", f"/verifications/{accepted['verification_id']}")
    answer = {
        "verification_id": view["verification_id"],
        "report_id": view["verification_id"],
        "run_id": view["run_id"],
        "status": view["status"],
        "claim": view["claim"],
        "watch": view.get("watch"),
    }
    if view.get("verdict"):
        answer.update(
            {
                "verdict": f"{view['verdict']} · {view.get('confidence')}",
                "headline": view.get("headline"),
                "evidence": _evidence(view.get("report")),
                "resource": f"research://reports/{view['verification_id']}",
            }
        )
    elif view["status"] == "running":
        answer["next"] = f"still running: read research://reports/{view['verification_id']} later"
    if view.get("error"):
        answer["error"] = view["error"]
    return answer


def _review_answer(view: dict[str, Any]) -> dict[str, Any]:
    answer = {
        "review_id": view["review_id"],
        "run_id": view["run_id"],
        "status": view["status"],
        "topic": view["topic"],
        "version": view["version"],
        "verdict": view.get("verdict"),
        "error": view.get("error"),
    }
    if view.get("markdown") and view["status"] in ("completed", "stale"):
        answer["markdown"] = view["markdown"]
        answer["resource"] = f"research://reports/{view['review_id']}"
    elif view["status"] == "running":
        answer["next"] = "still running: call get_review with this review_id later"
    return answer


async def start_review(
    api: GatewayApi, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    accepted = await _run(api, "/reviews", arguments, progress)
    return _review_answer(await api.call("GET", f"/reviews/{accepted['review_id']}"))


async def get_review(
    api: GatewayApi, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    asked = _validated(ReviewId, arguments)
    return _review_answer(await api.call("GET", f"/reviews/{asked.review_id}"))


async def _source_list(api: GatewayApi, source_list_id: str) -> dict[str, Any]:
    try:
        return {
            "source_list_id": source_list_id,
            **await api.call("GET", f"/source-lists/{source_list_id}"),
            "status": "ready",
        }
    except ToolFailure as exc:
        if exc.status != 409:
            raise
        return {
            "source_list_id": source_list_id,
            "status": "building",
            "detail": exc.reason,
            "next": "call get_source_list with this source_list_id later",
        }


async def build_source_list(
    api: GatewayApi, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    accepted = await _run(api, "/source-lists", arguments, progress)
    return await _source_list(api, str(accepted["source_list_id"]))


async def get_source_list(
    api: GatewayApi, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    asked = _validated(SourceListId, arguments)
    return await _source_list(api, str(asked.source_list_id))


async def search_ledger(
    api: GatewayApi, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    asked = _validated(LedgerSearch, arguments)
    words = asked.text.lower().split() if asked.text else []
    claims = await api.call(
        "GET",
        "/claims",
        params={
            "status": asked.status.value if asked.status else None,
            "entity": asked.entity,
            "limit": 500 if words else asked.limit,
        },
    )
    if words:
        claims = [
            c
            for c in claims
            if all(w in f"{c['statement']} {c['question']} {c['entity']}".lower() for w in words)
        ]
    return {
        "claims": [_compact_claim(c) for c in claims[: asked.limit]],
        "searched": "the newest 500 claims" if words else None,
    }


async def get_claim(
    api: GatewayApi, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    asked = _validated(ClaimId, arguments)
    claim = await api.call("GET", f"/claims/{asked.claim_id}")
    history = await api.call(
        "GET", "/audit", params={"claim_id": str(asked.claim_id), "limit": 100}
    )
    findings = await api.call("GET", "/findings", params={"limit": 500})
    return {
        **claim,
        "history": [
            {
                "action": h["action"],
                "at": h["occurred_at"],
                "service": h["service"],
                "payload": h["payload"],
            }
            for h in reversed(history)
        ],
        "findings": [
            f for f in findings if str(asked.claim_id) in [str(c) for c in f["claim_ids"]]
        ],
    }


async def list_findings(
    api: GatewayApi, arguments: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    asked = _validated(FindingsQuery, arguments)
    return {"findings": await api.call("GET", "/findings", params=asked.model_dump())}


@dataclass(frozen=True)
class ToolSpec:
    """A tool as listed (name, description, input schema) and the call that does its work."""

    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[GatewayApi, dict[str, Any], Progress], Awaitable[Any]]


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "ask_question",
            "Ask the engine a research question. The researcher drafts a claim from the evidence and the critic "
            "decides it; waits up to wait_seconds for the verdict and returns the claim, its verbatim quotes and "
            "its status (active = verified). Otherwise returns the task_id: ask again with it to keep waiting. "
            "Needs a researcher key.",
            _schema(TaskSubmission, AskOptions),
            ask_question,
        ),
        ToolSpec(
            "verify_claim",
            "Verify one claim against the literature: returns the verdict line (e.g. 'SUPPORTED · HIGH'), the "
            "evidence with exact quotes and the cited papers, and the report id (research://reports/{id}). "
            "watch=true re-verifies it on a schedule. Reports progress while it runs. Needs a researcher key.",
            _schema(VerificationRequest, Waiting),
            verify_claim,
        ),
        ToolSpec(
            "start_review",
            "Start a literature review of a topic (author and peer reviewer, up to two rounds). Reports progress "
            "(agent steps, tool calls, the peer-review verdict) and, when done within wait_seconds, returns the "
            "verdict and the Markdown report; otherwise the review_id for get_review. Needs a researcher key.",
            _schema(ReviewRequest, Waiting),
            start_review,
        ),
        ToolSpec(
            "get_review",
            "A review's status, peer-review verdict and, when completed, its Markdown report.",
            _schema(ReviewId),
            get_review,
        ),
        ToolSpec(
            "build_source_list",
            "Build a list of sources for a prompt (keywords, type, date range, language), each with why it is "
            "relevant; waits up to wait_seconds and returns the list, or its id for get_source_list. "
            "Needs a researcher key.",
            _schema(SourceListRequest, Waiting),
            build_source_list,
        ),
        ToolSpec(
            "get_source_list",
            "The latest snapshot of a source list (its sources with authors, publication, date and relevance).",
            _schema(SourceListId),
            get_source_list,
        ),
        ToolSpec(
            "search_ledger",
            "Search the ledger's claims by words, entity and status (active = verified); each with its verdict "
            "and quotes. Use get_claim for one claim's full record.",
            _schema(LedgerSearch),
            search_ledger,
        ),
        ToolSpec(
            "get_claim",
            "One claim: statement, status, confidence, its supports (verbatim quotes with sources), the critic's "
            "verdict, its history in the ledger and the agents' findings about it.",
            _schema(ClaimId),
            get_claim,
        ),
        ToolSpec(
            "list_findings",
            "Findings of the periodic agents (contradictions, replications, new papers), newest first.",
            _schema(FindingsQuery),
            list_findings,
        ),
    )
}
