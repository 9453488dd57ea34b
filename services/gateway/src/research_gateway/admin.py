"""Admin routes (admin role only): operator verbs of the periodic agents and the critic's quarantine.

    GET  /api/research/v1/{correlator,replicator,librarian}/status
    POST /api/research/v1/{correlator,replicator,librarian}/{run-once,cancel-current,pause,resume}
    POST /api/research/v1/critic/quarantine/drain        {"claim_ids": [...]} (optional)

Each call travels as NATS request/reply on `research.control.<agent>.<verb>` carrying the
caller's key id; the agent's `ControlReply.status` becomes the HTTP status (409 when a run is
in flight, 202 when a run started). Every call is audited (`research.admin.control`) with the
key id, never the key. No agent answering → 503; too slow → 504.
"""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from nats.errors import NoRespondersError
from pydantic import BaseModel, ConfigDict, Field

from research_contracts import ControlReply, ControlRequest, subjects
from research_gateway.auth import AUTH_RESPONSES, Admin, Caller
from research_gateway.deps import API, SERVICE, LedgerDoor
from research_ledger import AuditAction, Ledger
from research_platform.logging import get_logger

log = get_logger(__name__)

CONTROL_TIMEOUT_S = 10.0
router = APIRouter(prefix=API, tags=["admin"], responses=AUTH_RESPONSES)
# What the agent's reply can make of a verb (its `ControlReply.status`).
CONTROL_RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {
        "description": "run-once: a run started (its id in `detail.run_id`)",
        "model": ControlReply,
    },
    409: {"description": "a run is in flight or the agent is paused", "model": ControlReply},
    503: {"description": "no instance of the agent is running", "model": ControlReply},
    504: {"description": "the agent did not answer in time", "model": ControlReply},
}


class ControlBody(BaseModel):
    """Optional arguments of a verb, e.g. `{"wait": true, "timeout_s": 60}` for run-once.

    Strict: `"wait": 0` or `"wait": "yes"` is a 422, not a guess."""

    model_config = ConfigDict(extra="forbid", strict=True)

    wait: bool = Field(
        default=False, description="run-once: answer when the run finished (200) instead of 202."
    )
    timeout_s: float = Field(
        default=60.0, gt=0, le=600, description="run-once with wait: how long to wait."
    )


class DrainBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    claim_ids: list[uuid.UUID] | None = Field(
        default=None, description="Only these claims (default: every quarantined claim)."
    )


async def forward(
    request: Request,
    ledger: Ledger,
    caller: Caller,
    subject: str,
    args: dict[str, Any],
    timeout: float,
) -> JSONResponse:
    """Send the verb, audit it with the caller's key id, and mirror the reply as HTTP."""
    ask = ControlRequest(actor_key_id=str(caller.key_id), args=args)
    try:
        raw = await request.app.state.broker.request(ask, subject, timeout=timeout)
        reply = ControlReply.model_validate_json(raw.body)
    except NoRespondersError:
        reply = ControlReply(status=503, detail={"error": "no instance of the agent is running"})
    except TimeoutError:
        reply = ControlReply(status=504, detail={"error": "the agent did not answer in time"})
    except Exception as exc:  # noqa: BLE001 - any other fault is a 503 reply, and is audited
        log.error("control request failed", subject=subject, error=repr(exc))
        reply = ControlReply(
            status=503, detail={"error": f"control request failed: {type(exc).__name__}"}
        )
    async with ledger.unit_of_work(service=SERVICE) as uow:
        uow.audit(
            AuditAction.ADMIN_CONTROL,
            subject_ids={"key_id": caller.key_id, "subject": subject},
            payload={
                "status": reply.status,
                "args": args,
                "state": reply.state,
                "detail": reply.detail,
            },
        )
    return JSONResponse(status_code=reply.status, content=reply.model_dump(mode="json"))


def _verb_route(agent: str, verb: str) -> None:
    subject = subjects.control_subject(agent, verb)

    async def verb_route(
        request: Request, ledger: LedgerDoor, caller: Admin, body: ControlBody | None = None
    ) -> JSONResponse:
        args: dict[str, Any] = {}
        timeout = CONTROL_TIMEOUT_S
        if body is not None and body.wait and verb == "run-once":
            args = {"wait": True, "timeout_s": body.timeout_s}
            timeout = body.timeout_s + CONTROL_TIMEOUT_S
        return await forward(request, ledger, caller, subject, args, timeout)

    async def status_route(request: Request, ledger: LedgerDoor, caller: Admin) -> JSONResponse:
        return await forward(request, ledger, caller, subject, {}, CONTROL_TIMEOUT_S)

    handler = status_route if verb == "status" else verb_route  # a GET takes no body
    handler.__name__ = f"{agent}_{verb.replace('-', '_')}"
    method = router.get if verb == "status" else router.post
    method(
        f"/{agent}/{verb}",
        summary=f"{verb} of the {agent}",
        description=f"Admin only. Forwarded to `{subject}`.",
        response_model=ControlReply,
        responses=CONTROL_RESPONSES,
    )(handler)


for _agent in subjects.PERIODIC_AGENTS:
    for _verb in subjects.CONTROL_VERBS:
        _verb_route(_agent, _verb)


@router.post(
    "/critic/quarantine/drain",
    response_model=ControlReply,
    summary="Release claims from critic_quarantine",
    responses={k: v for k, v in CONTROL_RESPONSES.items() if k in (503, 504)},
)
async def drain_quarantine(
    request: Request, ledger: LedgerDoor, caller: Admin, body: DrainBody | None = None
) -> JSONResponse:
    """Admin only. The critic moves quarantined claims back to pending and judges them again."""
    args: dict[str, Any] = {}
    if body is not None and body.claim_ids is not None:
        args["claim_ids"] = [str(c) for c in body.claim_ids]
    return await forward(request, ledger, caller, subjects.CRITIC_DRAIN, args, CONTROL_TIMEOUT_S)
