"""The console's sign-ins: server-side sessions and single-use sign-in codes.

A browser signs in by posting a key to `/sign-in`, or by opening the URL `research-engine up`
prints: `/?code=<code>`, a single-use code that expires in minutes (`console_code_ttl_s`) and is
spent on first use. Either way the gateway opens a session: the browser's cookie holds the
session's id (256-bit random), never the API key, and the database holds only the id's SHA-256
(`console_sessions`, through `uow.signins`: `research_ledger.signins`), so neither a stolen
cookie jar nor a copy of the database yields a key. A session ends when it expires, when the
browser signs out, or when its key is revoked. A key in the URL (`/?key=`) no longer signs anyone
in.
"""

from __future__ import annotations

# The cookie holding a console session id (HttpOnly, SameSite=Strict; set by `console.pages`).
SESSION_COOKIE = "research_console_session"
# Where earlier versions kept the raw API key: never read; deleted when a browser presents it,
# which signs that browser out once.
OLD_KEY_COOKIE = "research_console_key"
