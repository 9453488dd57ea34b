"""DrugBank — present but disabled by default while the licence is pending; ids `drugbank:DB…`.

A licensed source reached with a bearer key at 5 requests/s through the configurable publisher
client; endpoint, journals and field mapping are `CONNECTOR__DRUGBANK__*` settings.
"""

from __future__ import annotations

from research_connector.sources.publisher import PublisherSource


class DrugBankSource(PublisherSource):
    """DrugBank through the publisher JSON client."""

    name = "drugbank"
