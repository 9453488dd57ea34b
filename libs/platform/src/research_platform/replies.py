"""Typed request/reply subscribers that always answer: the handler takes the parsed request
(FastStream validates it, and the service's AsyncAPI shows its schema), and a body that does not
validate is answered with the service's own refusal instead of leaving the caller to time out.

    router = refusing(lambda exc: EvidenceFound(error=f"invalid search request: {exc.errors(include_url=False)}"))

    @router.subscriber(subjects.CONNECTOR_SEARCH, queue=..., decoder=empty_is_object)
    async def on_search(request: SearchEvidence) -> EvidenceFound: ...

    broker.include_router(router)

`empty_is_object` keeps the old reading of an empty body (`{}`, every field at its default) for
the subjects whose requests are all optional (a corpus overview, an operator's drain of all).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from faststream.middlewares import ExceptionMiddleware
from faststream.nats import NatsRouter
from pydantic import BaseModel, ValidationError


def refusing(refuse: Callable[[ValidationError], BaseModel]) -> NatsRouter:
    """A router whose subscribers answer `refuse(exc)` to a request that does not validate."""

    def refusal(exc: ValidationError) -> BaseModel:
        return refuse(exc)

    return NatsRouter(
        middlewares=(ExceptionMiddleware(publish_handlers={ValidationError: refusal}),)
    )


async def empty_is_object(msg: Any, original: Callable[[Any], Awaitable[Any]]) -> Any:
    """Decode an empty body as `{}` (a request whose fields all have defaults), any other body as usual."""
    if not (msg.body or b"").strip():
        return {}
    return await original(msg)
