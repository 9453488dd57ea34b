"""Wolters Kluwer / LWW journals (JAMA, JBJS, Clinical Orthopaedics and Related Research) — one shared module.

A licensed source reached with a bearer key at 5 requests/s through the configurable publisher
client; endpoint, journals and field mapping are `CONNECTOR__LWW__*` settings.
"""

from __future__ import annotations

from research_connector.sources.publisher import PublisherSource


class LwwSource(PublisherSource):
    """Wolters Kluwer / LWW journals through the publisher JSON client."""

    name = "lww"
