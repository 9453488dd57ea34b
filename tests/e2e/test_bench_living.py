"""`bench:living --smoke` end to end: its own embedded stack, the ledger seeded, a retraction wave;
the closing line is printed, every affected review and watched claim went stale with its reason,
and the wave's re-verifications and re-critiques queue in the ledger, not on the bus."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys

import pytest

from tests.conftest import REPO

# the bench gives its subprocess 1,500 s (seeding, ingest and the stack on shared cores); the
# suite's default 600 s cut it short at a load average of 6–7
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1500)]

LINE = re.compile(
    r"^bench:living claims=(\d+) reviews=(\d+) watched=(\d+) retracted=(\d+)"
    r" stale_p95_s=([\d.]+) task_latency_ratio=([\d.]+) ratio_ci95=([\d.]+)-([\d.]+) tasks=(\d+)"
    r" target=(met|missed|inconclusive) queue_peak=(\d+)$"
)


def _run_in_own_group(command: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run `command` in a process group of its own, and kill the whole group however this ends
    (a timeout here or the suite's): the bench's stack (nats-server, PostgreSQL, the services)
    must not outlive the test."""
    child = subprocess.Popen(
        command,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = child.communicate(timeout=timeout)
        return subprocess.CompletedProcess(command, child.returncode, out, err)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)


def test_the_smoke_size_marks_every_affected_row_stale() -> None:
    done = _run_in_own_group(
        [sys.executable, "bench/living.py", "--smoke", "--window", "10", "--tasks", "1"], 1500
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    closing = LINE.match(lines[-1])
    assert closing, lines[-1]
    claims, reviews, watched, retracted, p95, ratio, low, high, tasks, _, peak = closing.groups()
    assert float(low) <= float(ratio) <= float(high) and tasks == "1"
    assert (claims, reviews, watched, retracted) == ("1000", "10", "100", "5")
    counts = re.search(r"affected=(\d+) marked=(\d+) with_reason=(\d+)", done.stdout)
    assert counts, done.stdout[-2000:]
    affected, marked, with_reason = map(int, counts.groups())
    assert affected > 0 and marked == affected and with_reason == affected
    assert float(p95) <= 60.0
    # the verifier's queue never holds more than the in-flight cap (the bench's default, 4)
    verifier = re.search(r"verifier-requests (\d+)", done.stdout)
    assert verifier and int(verifier.group(1)) <= 4, done.stdout[-2000:]
    assert int(peak) >= int(verifier.group(1)) and float(ratio) > 0
    # the wave's re-critiques wait in the ledger: the critic's queue holds at most the bench's cap (4)
    wave = re.search(r"re-critiques: (\d+) held by the wave, (\d+) released", done.stdout)
    assert wave and int(wave.group(1)) > 4, done.stdout[-2000:]
    critic = re.search(r"critic-recritique (\d+)", done.stdout)
    assert critic and int(critic.group(1)) <= 4, done.stdout[-2000:]
