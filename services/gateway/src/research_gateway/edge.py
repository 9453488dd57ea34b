"""The HTTP edge's own answers, made exact: every status it can send is documented and encodable.

- 422 (`validation_failed`): FastAPI's validation error body, with lone surrogates the client
  sent replaced by U+FFFD — FastAPI echoes the offending input, and a surrogate in it made the
  error response itself fail to encode (a 500 instead of a 422).
- 405 (`method_not_allowed`): `Allow` lists every documented method of the path. Starlette
  answers with the methods of the first route matching the path only, which is wrong when two
  routes share a path (`GET` and `POST /source-lists`).
- 422 (`single_query_values`): a scalar query parameter given twice (`?kind=a&kind=b`);
  FastAPI would silently keep the last value of what the schema says is one string.
- 400: a body that is not UTF-8 JSON is refused by FastAPI before validation; `document_edge`
  adds that answer to every operation that takes a body, so the OpenAPI document says so.
"""

from __future__ import annotations

import re
from typing import Any

from collections import Counter

from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.dependencies.utils import field_annotation_is_sequence
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException

from research_privacy.boundary import UncleanText

_SURROGATE = re.compile("[\ud800-\udfff]")
BAD_BODY = {"description": "the body is not UTF-8 JSON (it could not be parsed at all)"}


def _encodable(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encodable(v) for v in value]
    return value


async def validation_failed(request: Request, exc: RequestValidationError) -> JSONResponse:
    """FastAPI's 422 body (`{"detail": [...]}`), with characters JSON cannot encode replaced."""
    return JSONResponse(status_code=422, content={"detail": _encodable(jsonable_encoder(exc.errors()))})


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
    allowed = _documented_methods(request.app, request.url.path) or set((exc.headers or {}).get("Allow", "").split(", "))
    headers = {**(exc.headers or {}), "Allow": ", ".join(sorted(m for m in allowed if m))}
    return JSONResponse(status_code=405, content={"detail": "Method Not Allowed"}, headers=headers)


def _scalar_query_names(route: APIRoute) -> set[str]:
    names = set()
    for field in route.dependant.query_params:
        if not field_annotation_is_sequence(field.field_info.annotation):
            names.add(field.alias)
    for sub in route.dependant.dependencies:  # query parameters declared by dependencies
        names |= {f.alias for f in sub.query_params if not field_annotation_is_sequence(f.field_info.annotation)}
    return names


async def single_query_values(request: Request) -> None:
    """422 when a query parameter the route declares as one value is given several times."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    repeated = [name for name, count in Counter(k for k, _ in request.query_params.multi_items()).items() if count > 1]
    scalar = _scalar_query_names(route)
    errors = [
        {"type": "repeated_value", "loc": ("query", name), "msg": "this parameter takes one value; it was given several",
         "input": request.query_params.getlist(name)}
        for name in repeated if name in scalar
    ]
    if errors:
        raise RequestValidationError(errors)


def document_edge(app: FastAPI) -> None:
    """Generate the OpenAPI document with the 400 of an unparseable body on operations taking one."""

    generate = app.openapi

    def openapi() -> dict[str, Any]:
        schema = generate()  # FastAPI's document, cached on the app: the additions are idempotent
        for item in schema.get("paths", {}).values():
            for operation in item.values():
                if isinstance(operation, dict) and "requestBody" in operation:
                    operation.setdefault("responses", {}).setdefault("400", BAD_BODY)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


async def unclean_text(request: Request, exc: UncleanText) -> JSONResponse:
    """422 for text the ledger refused because identifiers were still found in it after the
    privacy boundary (text so odd that de-identifying it again keeps finding more): nothing was stored."""
    return JSONResponse(status_code=422, content={"detail": f"{exc}; rephrase the text without personal identifiers"})


def install(app: FastAPI) -> None:
    """The edge handlers, the repeated-parameter check and the OpenAPI additions, on `app` (call it
    before including routers: a router's routes take the app's dependencies when included)."""
    app.add_exception_handler(RequestValidationError, validation_failed)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, method_not_allowed)  # type: ignore[arg-type]
    app.add_exception_handler(UncleanText, unclean_text)  # type: ignore[arg-type]
    app.router.dependencies.append(Depends(single_query_values))  # before the routers are included
    document_edge(app)
