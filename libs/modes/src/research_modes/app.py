"""How a mode service (reviewer, verifier, scout) is wired: `mode_app`.

    app, ctx = mode_app(settings, SERVICE, build, emits=EMITS, requests=Consumes(...), command=RequestX)

Every mode is a `research_platform.app.service_app` with its run events declared
(`run_events=True`: a mode traces each run on `research.run.<run_id>.event`), the ledger's dead
letters (`research_ledger.dead_letters.recorder`, which also ends a dead-lettered request's run
events failed), the ledger's outbox relay (`research_ledger.outbox.relay_beside`: the events a
run's transaction staged go out after its commit) and one durable subscriber on its request subject that hands each parsed command to
the service object `build` made (`ctx.service.handle(command)`). What a mode runs beside that (a
stale sweep, a schedule) it adds to the returned context itself.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from faststream import FastStream
from pydantic import BaseModel

from research_ledger import dead_letters
from research_ledger.outbox import relay_beside
from research_platform.app import Build, Consumes, ServiceContext, service_app
from research_platform.broker import Emits
from research_platform.settings import Settings


class Handles(Protocol):
    """A mode's service object: it handles each parsed request command."""

    async def handle(self, command: Any) -> object: ...


S = TypeVar("S", bound=Settings)  # the mode's settings root
M = TypeVar("M", bound=Handles)  # the mode's service object


def mode_app(
    settings: S,
    name: str,
    build: Build[S, M],
    *,
    emits: tuple[Emits, ...],
    requests: Consumes,
    command: type[BaseModel],
) -> tuple[FastStream, ServiceContext[S, M]]:
    """The app of mode service `name` and its context: `service_app` with run events, dead
    letters and the outbox relay, and `requests` consumed as `command` messages by `ctx.service.handle`."""
    app, ctx = service_app(
        settings,
        name,
        build,
        emits=emits,
        run_events=True,
        dead_letters=dead_letters.recorder,
    )
    ctx.run_beside(relay_beside)

    async def on_request(request: BaseModel) -> None:
        await ctx.service.handle(request)

    # FastStream parses (and the AsyncAPI document names) the payload by the handler's annotation.
    on_request.__annotations__ = {"request": command, "return": None}
    ctx.consume(requests)(on_request)
    return app, ctx
