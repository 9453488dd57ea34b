"""The stream table (research_platform.broker.STREAM_TABLE) is the one source of the engine's
JetStream streams: every stream named in the contracts is declared once, from it."""

from __future__ import annotations

import pytest
from nats.js.api import RetentionPolicy, StorageType

from research_contracts import runs, subjects
from research_platform.broker import DAY, STREAM_TABLE, STREAMS, Stream, retained

pytestmark = pytest.mark.unit


def _contract_streams() -> dict[str, str]:
    """Every `*_STREAM` name the contracts define (subjects and run events)."""
    return {
        value: f"{module.__name__}.{name}"
        for module in (subjects, runs)
        for name, value in vars(module).items()
        if name.endswith("_STREAM") and isinstance(value, str)
    }


def test_every_stream_of_the_contracts_is_declared_once() -> None:
    names = [config.name for config in STREAMS]
    assert len(names) == len(set(names))
    assert set(names) == set(_contract_streams())


def test_no_subject_is_held_by_two_streams() -> None:
    held = [subject for config in STREAMS for subject in config.subjects or []]
    assert len(held) == len(set(held))


def test_each_row_makes_a_file_backed_limits_stream() -> None:
    row = Stream("S", ("a.*", "b.>"), max_age_days=3, duplicate_window_s=120)
    config = row.config()
    assert (config.name, config.subjects) == ("S", ["a.*", "b.>"])
    assert config.retention is RetentionPolicy.LIMITS and config.storage is StorageType.FILE
    assert (config.max_age, config.duplicate_window) == (3 * DAY, 120)
    assert [stream.config() for stream in STREAM_TABLE] == list(STREAMS[: len(STREAM_TABLE)])


def test_the_table_keeps_the_ages_and_windows_the_streams_had() -> None:
    by_name = {stream.name: stream for stream in STREAM_TABLE}
    assert by_name[subjects.DEAD_LETTER_STREAM].max_age_days == 30
    assert {s.max_age_days for n, s in by_name.items() if n != subjects.DEAD_LETTER_STREAM} == {7}
    assert {s.duplicate_window_s for s in STREAM_TABLE} == {600}
    dead = next(c for c in STREAMS if c.name == subjects.DEAD_LETTER_STREAM)
    assert retained(dead, 30.0).max_age == 30 * 86400
