"""A small but realistic literature review, built the way the reviewer's offline author will:
extractive findings whose quotes are sentences of the cited sources."""

from __future__ import annotations

from research_reports import Finding, Quote, Reference, Report, Section

SMITH = (
    "In a randomised trial of 2,400 adults aged 65 or older, vitamin D supplementation reduced hip fracture "
    "risk by 18% over three years. Adherence was high in both arms."
)
GARCIA = (
    "Vitamin D supplementation without calcium did not reduce fracture incidence in community-dwelling older "
    "adults. The pooled hazard ratio was 1.03 across 11 trials."
)
NAKAMURA = "Combined calcium and vitamin D lowered total fracture risk in nursing-home residents with low baseline vitamin D levels."


def references() -> list[Reference]:
    return [
        Reference(
            id=1,
            title="Vitamin D and hip fracture: a randomised trial",
            authors=["Smith, John", "Müller, Anna"],
            year=2019,
            venue="The Lancet",
            doi="10.1016/S0140-6736(19)0001-1",
            paper_id="corpus:11",
            source_text=SMITH,
        ),
        Reference(
            id=2,
            title="Vitamin D alone & fracture prevention: a meta-analysis",
            authors=["Maria Garcia", "Li Wei", "Ole Hansen"],
            year=2021,
            venue="JAMA",
            url="https://example.org/garcia",
            paper_id="corpus:27",
            source_text=GARCIA,
        ),
        Reference(
            id=3,
            title="Calcium plus vitamin D in nursing homes",
            authors=["Nakamura H"],
            year=2017,
            paper_id="pmid:28000001",
            source_text=NAKAMURA,
        ),
    ]


def review() -> Report:
    return Report(
        title="Vitamin D supplementation and fracture risk",
        kind="review",
        sections=[
            Section(
                title="Introduction",
                body="This review asks whether vitamin D supplementation prevents fractures in older adults.",
            ),
            Section(
                title="Research Landscape",
                body="The corpus holds 214 papers on the topic, published between 2004 and 2023.",
                requires_citations=False,
            ),
            Section(
                title="Key Findings",
                findings=[
                    Finding(
                        id="hip",
                        statement="Vitamin D supplementation reduced hip fracture risk by 18% in adults aged 65 or older.",
                        tag="SUPPORTED",
                        citations=[1, 3],
                        group="Fracture outcomes",
                        quotes=[
                            Quote(
                                reference_id=1,
                                text="vitamin D supplementation reduced hip fracture risk by 18% over three years",
                            )
                        ],
                    ),
                    Finding(
                        id="alone",
                        statement="Vitamin D without calcium did not reduce fracture incidence in older adults.",
                        tag="CONTESTED",
                        citations=[2],
                        group="Fracture outcomes",
                        quotes=[
                            Quote(
                                reference_id=2,
                                text="Vitamin D supplementation without calcium did not reduce fracture incidence",
                            )
                        ],
                    ),
                ],
            ),
            Section(
                title="Contradictions and Debates",
                body="Trials with calcium lowered fracture risk in nursing-home residents [3], while vitamin D alone did not reduce fracture incidence [2].",
            ),
            Section(title="Research Gaps", body="Few trials report outcomes for men."),
            Section(
                title="Suggested Future Research Directions",
                body="Trials should report fracture outcomes for men separately.",
            ),
        ],
        references=references(),
        metadata={"engine": "offline-test"},
    )
