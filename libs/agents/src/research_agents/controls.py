"""Operator verbs of a periodic agent over NATS request/reply (`research.control.<agent>.<verb>`).

The gateway's admin routes send a `ControlRequest` and return the `ControlReply.status` as the
HTTP status. Replicas share the subjects in a queue group: any replica can answer, because the
state they act on (run-lock, pause switch, cancel request) lives in Postgres. FastStream parses the
`ControlRequest` (an empty body is every field at its default); a body that does not validate is
answered 400 with the reason (`research_platform.replies.refusing`).

    status          200 {state, current_run, last_run, next_tick, findings_24h}
    run-once        202 {run_id}; with args.wait=true, 200 once the run finished; 409 in flight / paused
    cancel-current  200 {cancelled: run_id | null}
    pause, resume   200 {state}
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from faststream.nats import NatsBroker
from pydantic import ValidationError

from research_agents.errors import AgentPaused, RunInFlight
from research_agents.scheduler import Scheduler
from research_contracts import ControlReply, ControlRequest, subjects
from research_platform.logging import get_logger
from research_platform.replies import empty_is_object, refusing

log = get_logger(__name__)

Verb = Callable[[Scheduler, ControlRequest], Awaitable[ControlReply]]


async def _status(scheduler: Scheduler, request: ControlRequest) -> ControlReply:
    detail = await scheduler.status()
    return ControlReply(status=200, state=detail["state"], detail=detail)


async def _run_once(scheduler: Scheduler, request: ControlRequest) -> ControlReply:
    try:
        run_id = await scheduler.run_once(trigger="manual")
    except AgentPaused as exc:
        return ControlReply(status=409, state="paused", detail={"error": str(exc)})
    except RunInFlight as exc:
        detail = {"error": str(exc)}
        if exc.run_id:
            detail["run_id"] = str(exc.run_id)
        return ControlReply(status=409, state="running", detail=detail)
    if request.args.get("wait"):
        timeout = float(request.args.get("timeout_s", 60.0))
        try:
            await scheduler.wait_current(timeout)
        except TimeoutError:
            return ControlReply(
                status=202, state="running", detail={"run_id": str(run_id), "waited_s": timeout}
            )
        status = await scheduler.status()
        return ControlReply(
            status=200,
            state=status["state"],
            detail={"run_id": str(run_id), "run": status["last_run"]},
        )
    return ControlReply(status=202, state="running", detail={"run_id": str(run_id)})


async def _cancel_current(scheduler: Scheduler, request: ControlRequest) -> ControlReply:
    run_id = await scheduler.cancel_current(request.actor_key_id)
    detail = {"cancelled": str(run_id) if run_id else None}
    if run_id is None:
        detail["reason"] = "no run in flight"
    return ControlReply(status=200, state="running" if run_id else "idle", detail=detail)


async def _pause(scheduler: Scheduler, request: ControlRequest) -> ControlReply:
    await scheduler.pause(request.actor_key_id)
    return ControlReply(status=200, state="paused", detail={"paused": True})


async def _resume(scheduler: Scheduler, request: ControlRequest) -> ControlReply:
    await scheduler.resume(request.actor_key_id)
    state = (await scheduler.status())["state"]
    return ControlReply(status=200, state=state, detail={"paused": False})


VERBS: dict[str, Verb] = {
    "status": _status,
    "run-once": _run_once,
    "cancel-current": _cancel_current,
    "pause": _pause,
    "resume": _resume,
}


def refused(exc: ValidationError) -> ControlReply:
    """The reply to a body that is not a `ControlRequest`."""
    return ControlReply(
        status=400, detail={"error": f"invalid control request: {exc.errors(include_url=False)}"}
    )


async def answer(scheduler: Scheduler, verb: str, request: ControlRequest) -> ControlReply:
    """The reply to one control request; never raises (a failure is a 4xx/5xx reply)."""
    try:
        return await VERBS[verb](scheduler, request)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - the caller gets a 503 reply instead of a timeout
        log.error("control verb failed", agent=scheduler.agent, verb=verb, error=repr(exc))
        return ControlReply(status=503, detail={"error": f"{verb} failed: {type(exc).__name__}"})


def mount_controls(broker: NatsBroker, agent: str, scheduler: Callable[[], Scheduler]) -> None:
    """Subscribe the five verbs of `agent` (queue group `agent`) on `broker`."""
    controls = refusing(refused)
    for verb in VERBS:

        def handler(verb: str = verb) -> Callable[[ControlRequest], Awaitable[ControlReply]]:
            async def on_control(request: ControlRequest) -> ControlReply:
                return await answer(scheduler(), verb, request)

            return on_control

        controls.subscriber(
            subjects.control_subject(agent, verb),
            queue=agent,
            decoder=empty_is_object,
            title=f"{agent}.control.{verb}",
            description=f"Operator verb `{verb}` of the {agent} (ControlRequest → ControlReply).",
        )(handler())
    broker.include_router(controls)
