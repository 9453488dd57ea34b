"""Console pages: sign-in (a pasted key, or the single-use code `research-engine up` prints),
then one shell per view.

Why no data here: a page is a Jinja2 shell (layout, labels, the caller's role); the script in
`static/console.js` fills it from the JSON API, so the console never grows a second backend and
role checks stay in one place (`auth.require`). The page only looks the session's key up to know
the role, so controls a reader may not use are shown disabled (the API still answers 403).

Signing in (`signins.py`): `POST /sign-in` with the key in the form, or `GET /?code=<code>` with
a single-use code; either opens a server-side session whose id is the cookie (`HttpOnly`,
`SameSite=Strict`, `Secure` when the browser spoke https, to the gateway or to a trusted proxy).
`/?key=` signs nobody in. A browser still holding the old raw-key cookie is signed out once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from research_gateway.auth import RANK, ApiKeys, Caller, Guard
from research_gateway.deps import API, SERVICE, ledger_of
from research_gateway.signins import OLD_KEY_COOKIE, SESSION_COOKIE
from research_ledger.catalogue import AuditAction
from research_platform.settings import GatewayAuthSettings

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))
static = StaticFiles(directory=str(HERE / "static"))
router = APIRouter(include_in_schema=False)
GRAFANA_DASHBOARDS = ("pipeline", "modes", "agents", "sources", "audit")


def verify_enabled(request: Request) -> bool:
    """Whether the verifications routes (issue 11) are mounted on this gateway."""
    return any(path.startswith(f"{API}/verifications") for path in request.app.openapi()["paths"])


def _auth_settings(request: Request) -> GatewayAuthSettings:
    found = getattr(request.app.state, "auth_settings", None)
    return found if isinstance(found, GatewayAuthSettings) else GatewayAuthSettings()


def _guard(request: Request) -> Guard:
    found = getattr(request.app.state, "guard", None)
    return found if isinstance(found, Guard) else Guard()


async def signed_in(request: Request) -> Caller | None:
    """Who the cookie's session belongs to, or None (no cookie, an ended session, a revoked key)."""
    session_id = request.cookies.get(SESSION_COOKIE)
    if not session_id:
        return None
    async with ledger_of(request).unit_of_work(service=SERVICE) as uow:
        row = await uow.signins.key_of(session_id)
    return None if row is None else Caller(row.id, row.role, row.name)


def _forget_old_cookie(request: Request, response: Response) -> Response:
    """Delete the cookie earlier versions kept the raw key in (it signs that browser out once)."""
    if OLD_KEY_COOKIE in request.cookies:
        response.delete_cookie(OLD_KEY_COOKIE, path="/")
    return response


async def _session_for(request: Request, caller_key_id: Any) -> Response:
    """Open a session for the key and answer with its cookie, redirecting to the Ask page."""
    settings = _auth_settings(request)
    async with ledger_of(request).unit_of_work(service=SERVICE) as uow:
        session_id = await uow.signins.open(caller_key_id, settings.console_session_ttl_s)
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        session_id,
        max_age=int(settings.console_session_ttl_s),
        httponly=True,
        samesite="strict",
        secure=_guard(request).scheme_of(request) == "https",
        path="/",
    )
    return _forget_old_cookie(request, response)


async def page(request: Request, template: str, **context: Any) -> Response:
    """Render `template` for the signed-in caller, or the sign-in page."""
    caller = await signed_in(request)
    if caller is None:
        response = templates.TemplateResponse(
            request,
            "signin.html",
            {"page": "signin", "caller": None, "error": request.query_params.get("error")},
        )
        return _forget_old_cookie(request, response)
    roles = {role: RANK.get(caller.role, -1) >= rank for role, rank in RANK.items()}
    return templates.TemplateResponse(
        request, template, {"caller": caller, "can": roles, **context}
    )


async def _refused(request: Request, presented: str, what: str) -> Response:
    """A failed sign-in, counted by the API's throttle (`Guard.count_failure`): back to the form,
    or past the limit a 429 with `Retry-After`."""
    guard = _guard(request)
    wait = await guard.count_failure(
        ledger_of(request), guard.client_of(request), presented or None
    )
    if wait is None:
        return RedirectResponse(f"/?error={what.replace(' ', '+')}", status_code=303)
    error = f"too many failed sign-ins from this address; retry in {wait} s"
    return templates.TemplateResponse(
        request,
        "signin.html",
        {"page": "signin", "caller": None, "error": error},
        status_code=429,
        headers={"Retry-After": str(wait)},
    )


async def _signing_in(request: Request, key: str) -> Response:
    """Sign in with a pasted `key`, or refuse it."""
    async with ledger_of(request).unit_of_work(service=SERVICE) as uow:
        known = await ApiKeys(uow).identify(key) if key else None
    if known is not None:
        return await _session_for(request, known.key_id)
    return await _refused(request, key, "unknown or revoked key")


async def _spending(request: Request, code: str) -> Response:
    """Sign in with a single-use code, spending it, or refuse it."""
    async with ledger_of(request).unit_of_work(service=SERVICE) as uow:
        key_id = await uow.signins.spend_code(code) if code else None
    if key_id is not None:
        return await _session_for(request, key_id)
    return await _refused(request, code, "this sign-in code is unknown, spent or expired")


@router.get("/", response_class=HTMLResponse)
async def ask(request: Request, code: str | None = None) -> Response:
    """The Ask page; `/?code=...` (the URL `up` prints) spends the code, signs in and drops it from
    the URL. A key in the URL (`/?key=`) signs nobody in: the sign-in form asks for it instead."""
    if code is not None:
        return await _spending(request, code.strip())
    return await page(request, "ask.html", page="ask", verify_enabled=verify_enabled(request))


@router.get("/favicon.ico")
async def favicon() -> Response:
    """Browsers that ask for the icon at the site root get the console's own."""
    return RedirectResponse("/static/console/favicon.svg", status_code=308)


@router.post("/sign-in")
async def sign_in(request: Request) -> Response:
    """The sign-in form (a pasted key); parsed by hand: the gateway carries no multipart parser."""
    key = parse_qs((await request.body()).decode(errors="replace")).get("key", [""])[0]
    return await _signing_in(request, key.strip())


@router.post("/sign-out")
async def sign_out(request: Request) -> Response:
    """End this browser's session (on the server too) and delete its cookie."""
    session_id = request.cookies.get(SESSION_COOKIE)
    if session_id:
        async with ledger_of(request).unit_of_work(service=SERVICE) as uow:
            await uow.signins.close(session_id)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return _forget_old_cookie(request, response)


@router.get("/run/{run_id}", response_class=HTMLResponse)
async def run(request: Request, run_id: str, kind: str = "", id: str = "") -> Response:
    return await page(request, "run.html", page="run", run_id=run_id, kind=kind, record_id=id)


@router.get("/audit", response_class=HTMLResponse)
async def audit(request: Request) -> Response:
    return await page(
        request, "audit.html", page="audit", actions=sorted(a.value for a in AuditAction)
    )


@router.get("/operate", response_class=HTMLResponse)
async def operate(request: Request) -> Response:
    return await page(
        request,
        "operate.html",
        page="operate",
        grafana=request.app.state.grafana_url,
        dashboards=GRAFANA_DASHBOARDS,
    )


# The pages that need nothing but the caller and the id in their path (handed to the template
# under its path name): path → page name, its template `<name>.html`.
SHELL_PAGES = {
    "/task/{task_id}": "task",
    "/sources/{source_list_id}": "sources",
    "/report/{report_id}": "report",
    "/paper/{paper_id:path}": "paper",
    "/claim/{claim_id}": "claim",
    "/my-work": "work",
    "/ledger": "ledger",
    "/findings": "findings",
    "/reviews": "reviews",
    "/watched": "watched",
    "/schedules": "schedules",
}


def _shell_page(name: str) -> Callable[[Request], Awaitable[Response]]:
    async def render(request: Request) -> Response:
        return await page(request, f"{name}.html", page=name, **request.path_params)

    return render


for _path, _name in SHELL_PAGES.items():
    router.add_api_route(_path, _shell_page(_name), response_class=HTMLResponse, name=_name)
