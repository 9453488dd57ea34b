"""Console pages: sign-in by the key `research-engine up` prints, then one shell per view.

Why no data here: a page is a Jinja2 shell (layout, labels, the caller's role); the script in
`static/console.js` fills it from the JSON API, so the console never grows a second backend and
role checks stay in one place (`auth.require`). The page only looks the cookie's key up to know
the role, so controls a reader may not use are shown disabled (the API still answers 403).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from research_gateway.auth import CONSOLE_COOKIE, RANK, ApiKeys, Caller, Guard
from research_gateway.deps import API

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))
static = StaticFiles(directory=str(HERE / "static"))
router = APIRouter(include_in_schema=False)
COOKIE_MAX_AGE_S = 12 * 3600
GRAFANA_DASHBOARDS = ("pipeline", "modes", "agents", "sources", "audit")


def verify_enabled(request: Request) -> bool:
    """Whether the verifications routes (issue 11) are mounted on this gateway."""
    return any(path.startswith(f"{API}/verifications") for path in request.app.openapi()["paths"])


async def signed_in(request: Request) -> Caller | None:
    """Who the cookie's key belongs to, or None (no cookie, unknown or revoked key)."""
    secret = request.cookies.get(CONSOLE_COOKIE)
    if not secret:
        return None
    async with request.app.state.sessions() as session:
        return await ApiKeys(session).identify(secret)


def _sign_in(target: str, key: str, secure: bool) -> Response:
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        CONSOLE_COOKIE,
        key,
        max_age=COOKIE_MAX_AGE_S,
        httponly=True,
        samesite="strict",
        secure=secure,
        path="/",
    )
    return response


async def page(request: Request, template: str, **context: Any) -> Response:
    """Render `template` for the signed-in caller, or the sign-in page."""
    caller = await signed_in(request)
    if caller is None:
        return templates.TemplateResponse(
            request,
            "signin.html",
            {"page": "signin", "caller": None, "error": request.query_params.get("error")},
        )
    roles = {role: RANK.get(caller.role, -1) >= rank for role, rank in RANK.items()}
    return templates.TemplateResponse(
        request, template, {"caller": caller, "can": roles, **context}
    )


async def _signing_in(request: Request, key: str) -> Response:
    """Sign in with `key`, or refuse it: an unknown key is a failed key check counted by the API's
    throttle (`Guard.count_failure`), and past its limit the answer is 429 with `Retry-After`."""
    async with request.app.state.sessions() as session:
        known = await ApiKeys(session).identify(key) if key else None
    if known is not None:
        return _sign_in("/", key, request.url.scheme == "https")
    guard: Guard = getattr(request.app.state, "guard", Guard())
    wait = guard.count_failure(request.client.host if request.client else "unknown", key or None)
    if wait is None:
        return RedirectResponse("/?error=unknown+or+revoked+key", status_code=303)
    error = f"too many failed sign-ins from this address; retry in {wait} s"
    return templates.TemplateResponse(
        request,
        "signin.html",
        {"page": "signin", "caller": None, "error": error},
        status_code=429,
        headers={"Retry-After": str(wait)},
    )


@router.get("/", response_class=HTMLResponse)
async def ask(request: Request, key: str | None = None) -> Response:
    """The Ask page; `/?key=...` (the URL `up` prints) signs in and drops the key from the URL."""
    if key is not None:
        return await _signing_in(request, key.strip())
    return await page(request, "ask.html", page="ask", verify_enabled=verify_enabled(request))


@router.post("/sign-in")
async def sign_in(request: Request) -> Response:
    """The sign-in form (a pasted key); parsed by hand: the gateway carries no multipart parser."""
    key = parse_qs((await request.body()).decode(errors="replace")).get("key", [""])[0]
    return await _signing_in(request, key.strip())


@router.post("/sign-out")
async def sign_out() -> Response:
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(CONSOLE_COOKIE, path="/")
    return response


@router.get("/run/{run_id}", response_class=HTMLResponse)
async def run(request: Request, run_id: str, kind: str = "", id: str = "") -> Response:
    return await page(request, "run.html", page="run", run_id=run_id, kind=kind, record_id=id)


@router.get("/task/{task_id}", response_class=HTMLResponse)
async def task(request: Request, task_id: str) -> Response:
    return await page(request, "task.html", page="task", task_id=task_id)


@router.get("/sources/{source_list_id}", response_class=HTMLResponse)
async def source_list(request: Request, source_list_id: str) -> Response:
    return await page(request, "sources.html", page="sources", source_list_id=source_list_id)


@router.get("/report/{report_id}", response_class=HTMLResponse)
async def report(request: Request, report_id: str) -> Response:
    return await page(request, "report.html", page="report", report_id=report_id)


@router.get("/ledger", response_class=HTMLResponse)
async def ledger(request: Request) -> Response:
    return await page(request, "ledger.html", page="ledger")


@router.get("/claim/{claim_id}", response_class=HTMLResponse)
async def claim(request: Request, claim_id: str) -> Response:
    return await page(request, "claim.html", page="claim", claim_id=claim_id)


@router.get("/findings", response_class=HTMLResponse)
async def findings(request: Request) -> Response:
    return await page(request, "findings.html", page="findings")


@router.get("/reviews", response_class=HTMLResponse)
async def reviews(request: Request) -> Response:
    return await page(request, "reviews.html", page="reviews")


@router.get("/watched", response_class=HTMLResponse)
async def watched(request: Request) -> Response:
    return await page(request, "watched.html", page="watched")


@router.get("/schedules", response_class=HTMLResponse)
async def schedules(request: Request) -> Response:
    return await page(request, "schedules.html", page="schedules")


@router.get("/operate", response_class=HTMLResponse)
async def operate(request: Request) -> Response:
    return await page(
        request,
        "operate.html",
        page="operate",
        grafana=request.app.state.grafana_url,
        dashboards=GRAFANA_DASHBOARDS,
    )
