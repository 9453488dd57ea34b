"""structlog, configured once per process: JSON when not a terminal, contextvars bound.

Bind `task_id`, `claim_id` and `subject` with `structlog.contextvars.bound_contextvars` so one
grep follows one task across services.

Logs go to stderr, never stdout (stdout is the JSON-RPC channel of `research-engine mcp`). A
process that holds a person's raw text (the MCP server, before the gateway de-identifies it)
logs exceptions without their text: `exception_text=False` renders an exception as its type,
its causes' types and its frames (`exception_summary`), never its message or local variables.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import structlog

_configured = False


def exception_summary(exc: BaseException) -> dict[str, Any]:
    """An exception without its text: `error` (its type), `causes` (the types it was raised from)
    and `frames` (`file:line function`, innermost last). Messages and locals are left out: either
    may hold what a person typed."""
    causes: list[str] = []
    seen = exc.__cause__ or exc.__context__
    while seen is not None and len(causes) < 10:
        causes.append(type(seen).__qualname__)
        seen = seen.__cause__ or seen.__context__
    frames = [
        f"{Path(f.filename).name}:{f.lineno} {f.name}"
        for f in traceback.extract_tb(exc.__traceback__)
    ]
    return {"error": type(exc).__qualname__, "causes": causes, "frames": frames[-20:]}


def _summarise_exception(
    logger: Any, method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """A structlog processor: `exc_info` (structlog's or a stdlib record's) → `exception_summary`."""
    exc_info = event_dict.pop("exc_info", None)
    event_dict.pop("exception", None)
    if exc_info is True:
        exc_info = sys.exc_info()
    exc = (
        exc_info
        if isinstance(exc_info, BaseException)
        else exc_info[1]
        if isinstance(exc_info, tuple)
        else None
    )
    if exc is not None:
        event_dict.update(exception_summary(exc))
    return event_dict


def configure_logging(
    service: str, level: str = "INFO", json: bool | None = None, *, exception_text: bool = True
) -> None:
    """Set up structlog and the stdlib root logger for `service` (idempotent), writing to stderr.

    `exception_text=False`: exceptions are logged as `exception_summary` (no message, no locals).
    """
    global _configured  # noqa: PLW0603 - logging is configured once per process
    if _configured:
        return
    _configured = True
    if json is None:
        json = not sys.stderr.isatty()
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    own = [structlog.processors.format_exc_info]
    if not exception_text:  # stdlib records (the MCP SDK's `logger.exception`) are summarised too
        shared, own = [*shared, _summarise_exception], []
    structlog.configure(
        processors=[*shared, *own, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=shared,
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in (
        "httpx",
        "httpcore",
        "sentence_transformers",
        "transformers",
        "faststream.access",
    ):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    structlog.contextvars.bind_contextvars(service=service)


def get_logger(name: str | None = None) -> structlog.stdlib.BoundLogger:
    logger: structlog.stdlib.BoundLogger = structlog.get_logger(name)
    return logger
