"""The HTTP edge's own answers, made exact: every status it can send is documented and encodable.

- 422 (`validation_failed`): each error names the field (`loc`) and the rule (`type`, `msg`),
  never the rejected value: FastAPI's body echoes it (`input`, `ctx`), and a claim refused for
  one control character came back whole, a patient's name included. Lone surrogates in what
  is left (a dict key in `loc`) are replaced by U+FFFD, so the body itself always encodes.
- 405 (`method_not_allowed`): `Allow` lists every documented method of the path. Starlette
  answers with the methods of the first route matching the path only, which is wrong when two
  routes share a path (`GET` and `POST /source-lists`).
- 422 (`single_query_values`): a scalar query parameter given twice (`?kind=a&kind=b`);
  FastAPI would silently keep the last value of what the schema says is one string.
- 400: a body that is not UTF-8 JSON is refused by FastAPI before validation; `document_edge`
  adds that answer to every operation that takes a body, so the OpenAPI document says so.
- 421 / 403: a foreign `Host` or `Origin` (`hosts.HostGuard`), answered before any route;
  `document_edge` adds both to every operation, and the 413 of `limits.BodyCap`.
- 500: an unexpected error is answered `{"detail": "internal error"}` and logged by
  `QuietFailures` as its type, the route template and the code locations of its traceback —
  never its message, which may quote the request (a pydantic error quotes the input; uvicorn
  logged it whole).
"""

from __future__ import annotations

import re
import traceback
from collections import Counter
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.dependencies.utils import field_annotation_is_sequence
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from research_gateway.limits import TOO_LARGE, answer
from research_platform.logging import get_logger
from research_privacy.errors import UncleanText

log = get_logger(__name__)

_SURROGATE = re.compile("[\ud800-\udfff]")
BAD_BODY = {"description": "the body is not UTF-8 JSON (it could not be parsed at all)"}
MISDIRECTED = {
    "description": "the request's `Host` is not one this gateway answers (DNS rebinding): loopback, "
    "`GATEWAY_HOST` or `GATEWAY_ALLOWED_HOSTS`"
}
FOREIGN_ORIGIN = {
    "description": "a request from another site's page: its `Origin` is not this gateway's own"
}


def _encodable(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encodable(v) for v in value]
    return value


REJECTED_KEY = "(a key)"  # stands in `loc` for a key the request made up and the schema refused


def _located(error: dict[str, Any], known: frozenset[str]) -> list[Any]:
    """The error's `loc`, naming no key the client made up: an unknown field (`extra_forbidden`)
    or a refused dict key (pydantic's `[key]` step) that is not a field name of the API
    (`known`: `run_id` is named, so the client learns the server sets it) becomes `REJECTED_KEY`
    — a body `{"Jane Roe": 1}` came back as `loc: ["body", "Jane Roe"]`."""
    loc = list(error.get("loc", ()))
    made_up = {len(loc) - 1} if error.get("type") == "extra_forbidden" and loc else set()
    made_up |= {i for i in range(len(loc) - 1) if loc[i + 1] == "[key]"}
    return [
        REJECTED_KEY if i in made_up and step not in known else step for i, step in enumerate(loc)
    ]


def field_names(app: FastAPI) -> frozenset[str]:
    """Every property name of the app's OpenAPI schemas (computed once per app)."""
    names = getattr(app.state, "field_names", None)
    if names is None:
        schemas = app.openapi().get("components", {}).get("schemas", {})
        names = frozenset(
            name for schema in schemas.values() for name in schema.get("properties", {})
        )
        app.state.field_names = names
    return names


def _named(error: dict[str, Any], known: frozenset[str] = frozenset()) -> dict[str, Any]:
    """One validation error as the field and the rule it broke: `loc`, `type`, `msg` only.

    `input` (the rejected value) and `ctx` (pydantic's details, the raised error among them)
    are dropped; a message that quotes the value anyway (a validator's own wording) has it cut;
    `loc` never names a key the client sent that was refused (`_located`).
    """
    message = str(error.get("msg", ""))
    rejected = error.get("input")
    if isinstance(rejected, str) and len(rejected) >= 3:
        for quoted in (repr(rejected), rejected):
            message = message.replace(quoted, "(the value)")
    return {"type": str(error.get("type", "")), "loc": _located(error, known), "msg": message}


async def validation_failed(request: Request, exc: RequestValidationError) -> JSONResponse:
    """A 422 naming each failing field and its rule (`{"detail": [{loc, type, msg}]}`), never the value."""
    known = field_names(request.app)
    errors = [_named(error, known) for error in exc.errors()]
    return JSONResponse(status_code=422, content={"detail": _encodable(jsonable_encoder(errors))})


def _documented_methods(app: FastAPI, path: str) -> set[str]:
    """The methods the OpenAPI document lists for the path template matching `path`."""
    found: set[str] = set()
    for template, item in app.openapi().get("paths", {}).items():
        if re.fullmatch(re.sub(r"\\{[^/]+?\\}", "[^/]+", re.escape(template)), path):
            found |= {method.upper() for method in item if method.upper() in _METHODS}
    return found


_METHODS = {"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}


async def method_not_allowed(request: Request, exc: StarletteHTTPException) -> Response:
    """A 405 whose `Allow` names every documented method of the path; other errors as FastAPI does."""
    if exc.status_code != 405:
        return await http_exception_handler(request, exc)
    allowed = _documented_methods(request.app, request.url.path) or set(
        (exc.headers or {}).get("Allow", "").split(", ")
    )
    headers = {**(exc.headers or {}), "Allow": ", ".join(sorted(m for m in allowed if m))}
    return JSONResponse(status_code=405, content={"detail": "Method Not Allowed"}, headers=headers)


def _scalar_query_names(route: APIRoute) -> set[str]:
    names = set()
    for field in route.dependant.query_params:
        if not field_annotation_is_sequence(field.field_info.annotation):
            names.add(field.alias)
    for sub in route.dependant.dependencies:  # query parameters declared by dependencies
        names |= {
            f.alias
            for f in sub.query_params
            if not field_annotation_is_sequence(f.field_info.annotation)
        }
    return names


async def single_query_values(request: Request) -> None:
    """422 when a query parameter the route declares as one value is given several times."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    repeated = [
        name
        for name, count in Counter(k for k, _ in request.query_params.multi_items()).items()
        if count > 1
    ]
    scalar = _scalar_query_names(route)
    errors = [
        {
            "type": "repeated_value",
            "loc": ("query", name),
            "msg": "this parameter takes one value; it was given several",
        }
        for name in repeated
        if name in scalar
    ]
    if errors:
        raise RequestValidationError(errors)


def document_edge(app: FastAPI) -> None:
    """Generate the OpenAPI document with the 400 of an unparseable body on operations taking one,
    the 403 / 421 of `HostGuard` on every operation, and the 422 error items as
    `validation_failed` sends them."""

    generate = app.openapi

    def openapi() -> dict[str, Any]:
        schema = generate()  # FastAPI's document, cached on the app: the additions are idempotent
        error = schema.get("components", {}).get("schemas", {}).get("ValidationError")
        if error is not None:  # what `validation_failed` sends: the field and the rule, no value
            for echoed in ("input", "ctx"):
                error["properties"].pop(echoed, None)
            error["additionalProperties"] = False
        for item in schema.get("paths", {}).values():
            for operation in item.values():
                if not isinstance(operation, dict):
                    continue
                responses = operation.setdefault("responses", {})
                if "requestBody" in operation:
                    responses.setdefault("400", BAD_BODY)
                responses.setdefault(
                    "403", FOREIGN_ORIGIN
                )  # a route's own 403 (its role) names both
                responses.setdefault("421", MISDIRECTED)
                responses.setdefault("413", TOO_LARGE)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to extend the schema


async def unclean_text(request: Request, exc: UncleanText) -> JSONResponse:
    """422 for text the ledger refused because identifiers were still found in it after the
    privacy boundary (text so odd that de-identifying it again keeps finding more): nothing was stored."""
    return JSONResponse(
        status_code=422,
        content={"detail": f"{exc}; rephrase the text without personal identifiers"},
    )


class QuietFailures:
    """ASGI middleware: an unexpected error becomes a 500 (when nothing was sent yet) and one log
    line without the error's message (see the module docstring); nothing is re-raised, so the
    server's own traceback log, message included, is never written."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:  # noqa: BLE001 - every failure, logged without its message
            route = scope.get("route")
            log.error(
                "request failed",
                error=type(exc).__name__,
                route=getattr(route, "path", None),
                method=scope.get("method"),
                at=[f"{f.filename}:{f.lineno}" for f in traceback.extract_tb(exc.__traceback__)][
                    -8:
                ],
            )
            if not started:
                await answer(send, 500, "internal error")


def install(app: FastAPI) -> None:
    """The edge handlers, the repeated-parameter check and the OpenAPI additions, on `app` (call it
    before including routers: a router's routes take the app's dependencies when included)."""
    app.add_exception_handler(RequestValidationError, validation_failed)  # type: ignore[arg-type]  # Starlette calls it for this class only
    app.add_exception_handler(StarletteHTTPException, method_not_allowed)  # type: ignore[arg-type]  # Starlette calls it for this class only
    app.add_exception_handler(UncleanText, unclean_text)  # type: ignore[arg-type]  # Starlette calls it for this class only
    app.router.dependencies.append(Depends(single_query_values))  # before the routers are included
    document_edge(app)
