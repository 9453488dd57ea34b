"""Wiley journals (Journal of Orthopaedic Research, JBMR Part B) — one shared module.

A licensed source reached with a bearer key at 5 requests/s through the configurable publisher
client; endpoint, journals and field mapping are `CONNECTOR__WILEY__*` settings.
"""

from __future__ import annotations

from research_connector.sources.publisher import PublisherSource


class WileySource(PublisherSource):
    """Wiley journals through the publisher JSON client."""

    name = "wiley"
