"""Scrape a real `/metrics` endpoint and read its samples (the Prometheus text format parser)."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families


def scrape(url: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """sample name → [(labels, value)] as served at `url`."""
    reply = httpx.get(url, timeout=10)
    reply.raise_for_status()
    samples: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(reply.text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((sample.labels, sample.value))
    return samples


def value(
    samples: dict[str, list[tuple[dict[str, str], float]]], name: str, **labels: str
) -> float | None:
    """The value of the one series of `name` whose labels include `labels` (None when absent)."""
    found = [
        v
        for got, v in samples.get(name, [])
        if all(got.get(k) == want for k, want in labels.items())
    ]
    assert len(found) <= 1, f"{name}{labels} matches {len(found)} series"
    return found[0] if found else None
