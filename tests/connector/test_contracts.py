"""Contract tests: every recorded response in ../shared/fixtures parses exactly as recorded.

Each file of `index.json` has a check below that runs the connector's own parser on the bytes
as they are and asserts fields a user would see (ids, titles, years, authors, flags). A file
added to the index without a check fails `test_every_recorded_response_has_a_check`.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from research_connector.errors import SourceReportedError
from research_connector.sources import (
    arxiv,
    clinicaltrials,
    crossref,
    europepmc,
    openalex,
    pubmed,
    semantic_scholar,
    unpaywall,
)
from research_connector.sources.eutils import parse_esearch

pytestmark = pytest.mark.unit


def check_crossref_query(body: bytes) -> None:
    hits = crossref.parse_works(json.loads(body))
    assert len(hits) == 2
    assert all(h.source_id.startswith("doi:10.") and h.source == "crossref" for h in hits)
    assert all(h.metadata["retracted"] is False for h in hits)  # full records without updates


def check_crossref_one_id(body: bytes) -> None:
    (hit,) = crossref.parse_works(json.loads(body))
    assert hit.source_id == "doi:10.1371/journal.pone.0033693"
    assert hit.title.startswith("Methylphenidate Exposure Induces Dopamine Neuron Loss")
    assert hit.venue == "PLoS ONE" and hit.year == 2012 and hit.date == date(2012, 3, 21)
    # CrossRef lists a correction for this work: an update, but not a retraction.
    assert hit.metadata["updates"] == ["correction"]
    assert hit.metadata["retracted"] is False


def check_crossref_retraction(body: bytes) -> None:
    (hit,) = crossref.parse_works(json.loads(body))
    assert hit.source_id == "doi:10.1155/2022/8341966"
    assert (
        hit.title
        == "The Dilemma and Countermeasures of Music Education under the Background of Big Data"
    )
    assert hit.authors == ["Jiaye Han"]
    assert hit.venue == "Wireless Communications and Mobile Computing"
    # Recorded with `select=DOI,author,container-title,title`: `updated-by` was not asked for,
    # so the answer cannot say whether the work is retracted — the flag is unknown, not False.
    assert hit.metadata["retracted"] is None


def check_crossref_title_search(body: bytes) -> None:
    (hit,) = crossref.parse_works(json.loads(body))
    assert hit.source_id == "doi:10.1093/jamiaopen/ooae021"
    assert hit.title == "Retrieval augmented scientific claim verification"
    assert hit.venue == "JAMIA Open" and hit.year == 2024
    assert hit.abstract and "<jats" not in hit.abstract
    assert hit.metadata["retracted"] is False


def check_s2_match(body: bytes) -> None:
    (hit,) = semantic_scholar.parse_search(json.loads(body))
    assert hit.source_id == "s2:7e55d8701785818776323b4147cb13354c820469"
    assert hit.title == "PaperQA: Retrieval-Augmented Generative Agent for Scientific Research"
    assert hit.year == 2023 and hit.date == date(2023, 12, 8)
    assert hit.doi == "10.48550/arxiv.2312.07559"
    assert hit.authors[0] == "Jakub L'ala" and len(hit.authors) == 6
    assert hit.metadata["arxiv"] == "2312.07559"


def check_openalex_title_search(body: bytes) -> None:
    (hit,) = openalex.parse_works(json.loads(body))
    assert hit.source_id == "openalex:W4389761608"
    assert hit.title == "PaperQA: Retrieval-Augmented Generative Agent for Scientific Research"
    assert hit.year == 2023 and hit.doi == "10.48550/arxiv.2312.07559"
    assert hit.authors[0] == "Jakub Lála"
    assert hit.abstract.startswith(
        "Large Language Models (LLMs) generalize well across language tasks"
    )
    assert hit.metadata["retracted"] is False and hit.metadata["oa_status"] == "green"


def check_unpaywall_empty(body: bytes) -> None:
    assert unpaywall.parse_search(json.loads(body)) == []


def check_efetch_22351513(body: bytes) -> None:
    (hit,) = pubmed.parse_efetch(body)
    assert hit.source_id == "pmid:22351513"
    assert hit.title.startswith(
        "Variation in oil content and fatty acid composition of the seed oil of Acacia"
    )
    assert hit.year == 2012 and hit.date == date(2012, 8, 30)
    assert (
        hit.authors[0] == "Riyazuddeen Khan"
        and hit.authors[-1] == "Mahmooduzzafar"
        and len(hit.authors) == 6
    )
    assert hit.doi == "10.1002/jsfa.5627"
    assert hit.venue == "Journal of the science of food and agriculture"
    assert hit.abstract.startswith("BACKGROUND: The oil content") and "CONCLUSION:" in hit.abstract
    assert hit.metadata["publication_types"] == [
        "Journal Article",
        "Research Support, Non-U.S. Gov't",
    ]
    assert hit.metadata["retracted"] is False


def check_efetch_29915538(body: bytes) -> None:
    (hit,) = pubmed.parse_efetch(body)
    assert hit.source_id == "pmid:29915538"
    assert (
        "Semaglutide" in hit.title and hit.year == 2018 and hit.date is None
    )  # PubDate has a year only
    # The article's own ids, not the ~50 DOIs of its reference list.
    assert hit.doi == "10.3389/fphar.2018.00576" and hit.metadata["pmcid"] == "PMC5994433"
    assert hit.authors[0] == "Fang-Hong Shi"
    assert "<b>" not in hit.abstract and hit.abstract.startswith("Background: Semaglutide")
    assert "meta-analysis" in hit.metadata["keywords"]


def check_esearch_biocommons(body: bytes) -> None:
    assert parse_esearch(body) == ["1054894", "336867", "336322", "168056", "18145"]


def check_openalex_select(body: bytes) -> None:
    (hit,) = openalex.parse_works(json.loads(body))
    assert hit.source_id == "doi:10.1021/acs.jctc.5b00178"  # select= dropped the OpenAlex id
    assert hit.metadata["oa_status"] == "green" and hit.metadata["is_open_access"] is True


def check_s2_get_paper(body: bytes) -> None:
    hit = semantic_scholar.parse_paper(json.loads(body))
    assert hit.source_id == "s2:2d5673caa9e6af3a7b82a43f19ee920992db07ad"
    assert hit.title == "Computing Machinery and Intelligence"


def check_s2_not_found(body: bytes) -> None:
    assert semantic_scholar.not_found(json.loads(body))
    assert semantic_scholar.parse_search(json.loads(body)) == []


def check_s2_search(body: bytes) -> None:
    hits = semantic_scholar.parse_search(json.loads(body))
    assert len(hits) == 100 and len({h.source_id for h in hits}) == 100
    assert hits[0].title.startswith(
        "Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B"
    )
    assert any(h.title == "Neural Turing Machines" for h in hits)


def check_s2_open_access(body: bytes) -> None:
    hits = semantic_scholar.parse_search(json.loads(body))
    assert len(hits) == 100
    assert hits[0].metadata["open_access_pdf"] == "https://mededu.jmir.org/2023/1/e46939/PDF"
    assert hits[0].metadata["open_access_status"] == "GOLD"


def check_s2_fields_filtering(body: bytes) -> None:
    (hit,) = semantic_scholar.parse_search(json.loads(body))
    assert hit.title == "Augmenting large language models with chemistry tools"
    assert hit.doi == "10.1038/s42256-024-00832-8"
    assert hit.metadata["pmid"] == "38799228" and hit.metadata["pmcid"] == "PMC11116106"
    assert hit.authors[0] == "Andrés M Bran"


def check_crossref_bibtex_404(body: bytes) -> None:
    # A text/plain 404 from CrossRef: not JSON; the connector reads the status, never this body.
    assert body.decode() == "Resource not found."
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)


def check_arxiv_2016(body: bytes) -> None:
    (hit,) = arxiv.parse_feed(body)
    assert hit.source_id == "arxiv:1111.2011" and hit.metadata["version"] == 2
    assert (
        hit.title
        == "Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large Connectivity Limit"
    )
    assert hit.authors == ["James M. Murray", "Adrian Del Maestro", "Zlatko Tesanovic"]
    assert hit.year == 2011 and hit.doi == "10.1103/physrevb.85.115117"
    assert hit.metadata["journal_ref"] == "Phys. Rev. B 85, 115117 (2012)"
    assert hit.metadata["primary_category"] == "cond-mat.str-el"


def check_arxiv_id(body: bytes) -> None:
    (hit,) = arxiv.parse_feed(body)
    assert hit.source_id == "arxiv:1605.08386"
    assert hit.title == "Heat-bath random walks with Markov bases"
    assert hit.authors == ["Caprice Stanley", "Tobias Windisch"] and hit.date == date(2016, 5, 26)
    assert hit.metadata["categories"] == ["math.CO", "math.ST"]


def check_arxiv_error(body: bytes) -> None:
    with pytest.raises(SourceReportedError, match="incorrect id format for abc"):
        arxiv.parse_feed(body)


def check_arxiv_query(body: bytes) -> None:
    hits = arxiv.parse_feed(body)
    assert len(hits) == 10
    assert hits[0].source_id == "arxiv:2202.12139"
    assert (
        hits[0].title
        == "Testing Deep Learning Models: A First Comparative Study of Multiple Testing Techniques"
    )
    assert hits[0].doi == "10.1109/icstw55395.2022.00035" and hits[0].year == 2022
    assert hits[1].authors[0] == "Aurora RamÃ\xadrez"  # mojibake kept exactly as recorded


def check_clinicaltrials(body: bytes) -> None:
    hits = clinicaltrials.parse_studies(json.loads(body))
    assert [h.source_id for h in hits] == ["nct:NCT07854847", "nct:NCT07845812", "nct:NCT07845526"]
    first = hits[0]
    assert first.title.startswith(
        "Randomized, Double-Blind, Interchangeability Study of In-House Recombinant Hepatitis B"
    )
    assert (
        first.metadata["phases"] == ["PHASE3"]
        and first.metadata["overall_status"] == "NOT_YET_RECRUITING"
    )
    assert first.year == 2026 and first.date == date(2026, 10, 2)
    assert hits[1].metadata["enrollment"] == 1500 and hits[1].metadata["phases"] == ["PHASE4"]
    # contacts' phones and e-mails are not carried into the evidence
    assert "@" not in json.dumps([h.model_dump(mode="json") for h in hits])


def check_europepmc(body: bytes) -> None:
    hits = europepmc.parse_search(json.loads(body))
    assert [h.source_id for h in hits] == ["pmid:41792208", "pmid:41744547", "pmcid:PMC13013079"]
    assert hits[0].title == "Object tracking algorithm based on deformable attention mechanism."
    assert hits[0].doi == "10.1038/s41598-026-43147-x" and hits[0].year == 2026
    assert hits[0].authors == ["Liu Q", "Yu N", "Cheng J"]
    assert hits[1].metadata["pmcid"] == "PMC12938590" and hits[1].metadata["is_open_access"] is True


def check_esearch_biopython(body: bytes) -> None:
    ids = parse_esearch(body)
    assert len(ids) == 20 and ids[0] == "41282813" and ids[-1] == "37810457"


def check_esearch_json(body: bytes) -> None:
    assert parse_esearch(body) == ["42313977", "41196948", "41166468"]


def check_esummary(body: bytes) -> None:
    hits = pubmed.parse_esummary(json.loads(body))
    assert [h.source_id for h in hits] == ["pmid:31452104", "pmid:3026048"]
    assert hits[0].title == "Molegro Virtual Docker for Docking." and hits[0].year == 2019
    assert hits[0].doi == "10.1007/978-1-4939-9752-7_10"
    assert hits[1].year == 1987 and hits[1].authors[0] == "Luo M" and len(hits[1].authors) == 10


CHECKS = {
    "crossref/habanero_cassette_test_works_query__00.json": check_crossref_query,
    "crossref/habanero_cassette_test_works_with_one_id__00.json": check_crossref_one_id,
    "crossref/paperqa_cassette_test_crossref_retraction_status__00.json": check_crossref_retraction,
    "crossref/paperqa_cassette_test_title_search_paper_attributes1__00.json": check_crossref_title_search,
    "semantic_scholar/paperqa_cassette_test_title_search_paper_attributes1__01.json": check_s2_match,
    "openalex/paperqa_cassette_test_title_search_paper_attributes1__02.json": check_openalex_title_search,
    "unpaywall/paperqa_cassette_test_title_search_paper_attributes1__03.json": check_unpaywall_empty,
    "pubmed/biocommons_cassette_efetch_pubmed_22351513__00.xml": check_efetch_22351513,
    "pubmed/biocommons_cassette_efetch_pubmed_29915538__00.xml": check_efetch_29915538,
    "pubmed/biocommons_cassette_test_esearch__00.xml": check_esearch_biocommons,
    "openalex/paperqa_cassette_test_does_openalex_work_oa-in-openalex1__00.json": check_openalex_select,
    "semantic_scholar/danielnsilva_cassette_test_get_paper__00.json": check_s2_get_paper,
    "semantic_scholar/danielnsilva_cassette_test_not_found__00.json": check_s2_not_found,
    "semantic_scholar/danielnsilva_cassette_test_not_found__01.json": check_s2_not_found,
    "semantic_scholar/danielnsilva_cassette_test_search_paper__00.json": check_s2_search,
    "semantic_scholar/danielnsilva_cassette_test_search_paper_open_access_pdf__00.json": check_s2_open_access,
    "semantic_scholar/paperqa_cassette_test_s2_only_fields_filtering__00.json": check_s2_fields_filtering,
    "semantic_scholar/paperqa_cassette_test_s2_only_fields_filtering__01.txt": check_crossref_bibtex_404,
    "arxiv/arxivpy_2016_id_list=1111.2011v2.xml": check_arxiv_2016,
    "arxiv/arxivpy_id_1605.08386_s0_m100_199195aa31ad.body.atom.xml": check_arxiv_id,
    "arxiv/arxivpy_id_abc_s0_m100_b79c8dcf6bc3.body.atom.xml": check_arxiv_error,
    "arxiv/arxivpy_q_testing_s0_m10_bc5a6c384fe9.body.atom.xml": check_arxiv_query,
    "clinicaltrials/pubmedwatch_ctgov_studies.json": check_clinicaltrials,
    "europepmc/fastpaper_europepmc_search.json": check_europepmc,
    "pubmed/biopython_esearch1.xml": check_esearch_biopython,
    "pubmed/esearch_pubmed.json": check_esearch_json,
    "pubmed/esummary_pubmed.json": check_esummary,
}


def test_every_recorded_response_has_a_check(fixtures_dir: Path) -> None:
    indexed = [entry["file"] for entry in json.loads((fixtures_dir / "index.json").read_text())]
    assert sorted(indexed) == sorted(CHECKS), (
        "a recorded response in index.json has no contract check"
    )


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_recorded_response_parses_as_recorded(name: str, fixtures_dir: Path) -> None:
    CHECKS[name]((fixtures_dir / name).read_bytes())
