"""Merging per-source answers: round-robin order, duplicates folded by DOI / PMID / title,
retraction kept; and the settings read keys and rates from `CONNECTOR__…` variables."""

from __future__ import annotations

import pytest

from research_connector.fanout import merge, title_key
from research_connector.settings import ConnectorServiceSettings, ConnectorSettings
from research_contracts import SourceHit

pytestmark = pytest.mark.unit


def hit(source_id: str, source: str, title: str = "", **fields) -> SourceHit:
    return SourceHit(source_id=source_id, source=source, title=title, **fields)


def test_duplicates_fold_by_doi_pmid_and_title() -> None:
    pubmed = [
        hit(
            "pmid:1", "pubmed", "Semaglutide and weight in type 2 diabetes", doi="10.1/a", year=2018
        ),
        hit("pmid:2", "pubmed", "Statins and myopathy: a cohort study"),
    ]
    crossref = [
        hit(
            "doi:10.1/a",
            "crossref",
            "Semaglutide and Weight in Type 2 Diabetes.",
            doi="10.1/a",
            abstract="An abstract only CrossRef had.",
            metadata={"retracted": True},
        ),
        hit("doi:10.9/z", "crossref", "Something else entirely about knees"),
    ]
    europepmc = [
        hit("pmid:2", "europepmc", "Statins and myopathy - a cohort study", metadata={"pmid": "2"})
    ]
    s2 = [hit("s2:abc", "semantic_scholar", "STATINS AND MYOPATHY: A COHORT STUDY")]
    merged = merge([pubmed, crossref, europepmc, s2])
    # rank 0 of every source first, then rank 1: Europe PMC's pmid:2 comes before CrossRef's second hit
    assert [h.source_id for h in merged] == ["pmid:1", "pmid:2", "doi:10.9/z"]
    first = merged[0]
    assert first.metadata["also_in"] == ["doi:10.1/a"]
    assert first.metadata["retracted"] is True  # any source saying retracted wins
    assert first.abstract == "An abstract only CrossRef had." and first.year == 2018
    assert merged[1].source == "europepmc" and merged[1].metadata["also_in"] == ["s2:abc", "pmid:2"]


def test_short_titles_are_not_used_to_merge() -> None:
    assert title_key("Editorial") is None
    merged = merge(
        [[hit("doi:10.1/x", "crossref", "Editorial")], [hit("doi:10.2/y", "crossref", "Editorial")]]
    )
    assert len(merged) == 2


def test_settings_come_from_nested_environment_variables(monkeypatch) -> None:
    monkeypatch.setenv("CONNECTOR__PUBMED__API_KEY", "k-123456")
    monkeypatch.setenv("CONNECTOR__CROSSREF__MAILTO", "team@example.org")
    monkeypatch.setenv("CONNECTOR__DRUGBANK__ENABLED", "true")
    monkeypatch.setenv("CONNECTOR__ELSEVIER__JOURNALS", '["Acta Biomaterialia"]')
    settings = ConnectorServiceSettings(_env_file=None).connector
    assert (
        settings.pubmed.api_key is not None
        and settings.pubmed.api_key.get_secret_value() == "k-123456"
    )
    assert "k-123456" not in repr(settings)
    assert settings.drugbank.enabled and settings.elsevier.journals == ["Acta Biomaterialia"]
    assert settings.pubmed.effective_rate_per_s() == 10.0  # a key unlocks NCBI's higher rate
    assert settings.crossref.effective_rate_per_s() == 10.0  # mailto joins the polite pool
    assert settings.arxiv.effective_rate_per_s() == pytest.approx(1 / 3)
    assert ConnectorSettings().semantic_scholar.rate_per_s == 1.0
