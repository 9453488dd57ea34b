"""Librarian settings: the `librarian` group of the process settings (see research_platform.settings),
read from `LIBRARIAN__<FIELD>` (e.g. `LIBRARIAN__BATCH_SIZE=100`,
`LIBRARIAN__SCHEDULE__INTERVAL_S=300`, `LIBRARIAN__DECAY_WINDOW_DAYS=30`)."""

from __future__ import annotations

from pydantic import Field, NonNegativeInt, PositiveInt

from research_agents import ScheduleSettings
from research_platform.settings import Settings, SettingsGroup


class LibrarianSettings(SettingsGroup):
    """How much of the ledger one run validates and what counts as approaching decay."""

    schedule: ScheduleSettings = Field(default_factory=lambda: ScheduleSettings(interval_s=300.0))
    batch_size: int = Field(default=100, ge=1, le=100_000)
    """Claims validated per statement."""
    batches_per_run: NonNegativeInt = 50
    """Batches per run (0 = a whole pass over the ledger); the cursor carries over."""
    decay_window_days: NonNegativeInt = 30
    """`decay_at` this close (or past) → approaching_decay."""
    write_every: PositiveInt = 200
    """Changes buffered before one transaction writes them (findings + audit rows)."""
    purge_batch_size: PositiveInt = 1000
    """Expired findings deleted per transaction."""
    purge_batches_per_run: PositiveInt = 10
    """Purge transactions per run."""


class LibrarianServiceSettings(Settings):
    """The librarian process: the shared settings plus the `librarian` group (`LIBRARIAN__<FIELD>`)."""

    librarian: LibrarianSettings = Field(default_factory=LibrarianSettings)
