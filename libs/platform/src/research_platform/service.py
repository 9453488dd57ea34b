"""Process entry point shared by every service: logging, metrics endpoint, graceful shutdown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TypeVar

from faststream import FastStream

from research_platform import installation, metrics
from research_platform.logging import configure_logging, get_logger
from research_platform.offline import keep_models_offline
from research_platform.settings import Settings

S = TypeVar("S", bound=Settings)


def run_service(
    name: str,
    create_app: Callable[[S], FastStream],
    settings_type: type[S] = Settings,  # type: ignore[assignment]  # S's bound, when no subclass is given
) -> None:
    """Configure the process for service `name` and run its FastStream app until SIGINT/SIGTERM.

    `settings_type` is the service's root settings (the shared `Settings` or its subclass with
    the service's group), read once from the environment here. `METRICS_PORT`, when set,
    exposes Prometheus metrics on that port (`METRICS_HOST`, default all interfaces); the
    broker gets the metrics middleware and the consumer-lag gauge (`metrics.instrument_app`).
    """
    keep_models_offline()
    settings = settings_type()
    configure_logging(name, settings.log_level, settings.log_json)
    installation.install(installation.installation_secret(settings))  # keys audit digests
    if settings.metrics_port:
        metrics.serve(settings.metrics_port, settings.metrics_host)
    get_logger(__name__).info(
        "service starting", nats=bool(settings.nats_url), metrics_port=settings.metrics_port
    )
    app = create_app(settings)
    metrics.instrument_app(app, name, interval_s=settings.metrics_lag_interval_s)
    app.logger = logging.getLogger("faststream.app")
    asyncio.run(app.run(log_level=logging.WARNING))
