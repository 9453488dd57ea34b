"""The judgement section the process's entry point handed in: `configure_judgement(settings.judgement)`
(in its bootstrap, before the first `get_judge()` / `get_abstract_judge()`). A process that
never does gets the section's defaults: the shipped weights on torch."""

from __future__ import annotations

from collections.abc import Callable

from research_platform.settings import JudgementSettings

_configured: list[JudgementSettings] = []
_dropped: list[Callable[[], None]] = []  # callbacks that forget a model loaded under other settings


def configure_judgement(settings: JudgementSettings) -> None:
    """Make `settings` the judgement section of this process; models loaded under another one are dropped."""
    if _configured and _configured[0] == settings:
        return
    _configured[:] = [settings]
    for forget in _dropped:
        forget()


def judgement_settings() -> JudgementSettings:
    """The section `configure_judgement` was given, else the defaults."""
    return _configured[0] if _configured else JudgementSettings()


def on_reconfigure(forget: Callable[[], None]) -> None:
    """Call `forget()` whenever the section changes (a cached process-wide model)."""
    _dropped.append(forget)
