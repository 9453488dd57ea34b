"""The web console: server-rendered pages whose small script calls the same JSON API as the CLI.

`pages.router` serves the HTML shells at `/` and `/static/console/*` (kept out of the OpenAPI
document: they hold no ledger data; every datum comes from `/api/research/v1/...` under the
caller's key, carried by the sign-in cookie).
"""

from research_gateway.console.pages import router

__all__ = ["router"]
