"""NCCN clinical practice guidelines (guideline endpoint; ids `nccn:<guideline id>`).

A licensed source reached with a bearer key at 5 requests/s through the configurable publisher
client; endpoint, journals and field mapping are `CONNECTOR__NCCN__*` settings.
"""

from __future__ import annotations

from research_connector.sources.publisher import PublisherSource


class NccnSource(PublisherSource):
    """NCCN clinical practice guidelines through the publisher JSON client."""

    name = "nccn"
