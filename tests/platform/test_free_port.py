"""Ports handed to embedded servers and service metrics come from below the kernel's range for
outgoing connections, so no process's next outgoing connection can take one before it is bound."""

from __future__ import annotations

import socket

import pytest

from research_platform.embedded import _ephemeral_low, free_port

pytestmark = pytest.mark.unit


def test_a_free_port_is_bindable_and_outside_the_ephemeral_range():
    low = _ephemeral_low()
    ports = {free_port() for _ in range(20)}
    assert all(10_000 <= p < low for p in ports) and len(ports) > 1
    for port in list(ports)[:3]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", port))  # nobody holds it


def test_a_port_someone_listens_on_is_never_handed_out(monkeypatch):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        picks = iter([busy, busy, busy])
        real = __import__("random").SystemRandom.randint
        monkeypatch.setattr(
            "random.SystemRandom.randint", lambda self, a, b: next(picks, None) or real(self, a, b)
        )
        port = free_port()
    assert port != busy


def test_a_port_is_handed_out_once_even_before_anyone_binds_it(monkeypatch):
    """A stack picks every service's port before any binds: two picks that meet would give two
    services one port (one then dies of "Address already in use")."""
    first = free_port()
    picks = iter([first, first, first])
    real = __import__("random").SystemRandom.randint
    monkeypatch.setattr(
        "random.SystemRandom.randint", lambda self, a, b: next(picks, None) or real(self, a, b)
    )
    assert free_port() != first
