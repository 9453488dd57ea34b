"""The Taskfile is how every documented command runs (`task test` is CI's): it must parse, and every
task must name what it runs."""

from __future__ import annotations

import pytest
import yaml

from tests.conftest import REPO

pytestmark = pytest.mark.unit


def test_the_taskfile_parses_and_every_task_runs_something() -> None:
    tasks = yaml.safe_load((REPO / "Taskfile.yml").read_text(encoding="utf-8"))["tasks"]
    assert {"setup", "demo", "test"} <= set(tasks)
    assert [name for name, task in tasks.items() if not task.get("cmds")] == []
    assert all(isinstance(task.get("desc", ""), str) for task in tasks.values())
