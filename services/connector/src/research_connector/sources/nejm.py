"""NEJM (The New England Journal of Medicine).

A licensed source reached with a bearer key at 5 requests/s through the configurable publisher
client; endpoint, journals and field mapping are `CONNECTOR__NEJM__*` settings.
"""

from __future__ import annotations

from research_connector.sources.publisher import PublisherSource


class NejmSource(PublisherSource):
    """NEJM through the publisher JSON client."""

    name = "nejm"
