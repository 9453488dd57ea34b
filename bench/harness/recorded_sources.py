"""The outside sources' recorded answers (../shared/fixtures), for benchmarks that run the
connector without the network: the fan-out over `httpx.MockTransport`, the pipeline's local
stand-in server, the source lists' demo prompts."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
# The host each source's client calls, to the source's name (PubMed's two calls are told apart
# by their path: `esearch`, `efetch`).
HOSTS = {
    "www.ebi.ac.uk": "europepmc",
    "export.arxiv.org": "arxiv",
    "api.crossref.org": "crossref",
}


def recorded_answers() -> dict[str, bytes]:
    """The body each outside source answers any search with: `esearch` (PubMed's two ids),
    `efetch` (those two articles in one set), `crossref`, `europepmc`, `arxiv`."""
    read = lambda name: (FIXTURES / name).read_bytes()
    return {
        "esearch": b'{"esearchresult": {"idlist": ["22351513", "29915538"]}}',
        "efetch": read("pubmed/biocommons_cassette_efetch_pubmed_22351513__00.xml").replace(
            b"</PubmedArticleSet>", b""
        )
        + read("pubmed/biocommons_cassette_efetch_pubmed_29915538__00.xml").split(
            b"<PubmedArticleSet>", 1
        )[1],
        "crossref": read("crossref/habanero_cassette_test_works_query__00.json"),
        "europepmc": read("europepmc/fastpaper_europepmc_search.json"),
        "arxiv": read("arxiv/arxivpy_q_testing_s0_m10_bc5a6c384fe9.body.atom.xml"),
    }
