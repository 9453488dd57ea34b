"""A query carrying personal identifiers is recognised; scientific queries pass untouched."""

from __future__ import annotations

import pytest

from research_connector.phi import find_identifiers

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("Mr. Smith statin myopathy", "name"),
        ("Dr Jane Okafor knee arthroplasty outcomes", "name"),
        ("patient named Maria with lupus nephritis", "name"),
        ("sepsis admitted 2024-03-05", "date"),
        ("fracture on 03/05/2024", "date"),
        ("seen on March 5, 2024 for chest pain", "date"),
        ("onset 5th of June hepatitis", "date"),
        ("relapse since March 2021", "date"),
        ("call (713) 500-5806 about trial", "phone"),
        ("contact +44 20 7946 0958", "phone"),
        ("results to guliz.erdem@uth.tmc.edu", "email"),
        ("MRN 00123456 troponin", "record_number"),
        ("medical record number: A1234567", "record_number"),
        ("SSN 123-45-6789 diabetes", "ssn"),
        ("lives at 42 Wallaby Way osteoporosis", "address"),
        ("see https://example.org/chart/991 for history", "url"),
        ("www.hospital-portal.com/records", "url"),
        ("logged in from 192.168.10.24", "ip"),
        ("host 2001:db8::8a2e:370:7334 access", "ip"),
    ],
)
def test_identifier_patterns_are_found(query: str, kind: str) -> None:
    assert kind in find_identifiers(query)


@pytest.mark.parametrize(
    "query",
    [
        "Does vitamin D supplementation reduce fracture risk?",
        "semaglutide type 2 diabetes HbA1c 2015-2020",
        "MS relapse rate natalizumab",  # multiple sclerosis, not a title
        "DR screening in diabetic retinopathy",
        "IL-6 and TNF-alpha in COVID-19 severity",
        "BRCA1 c.68_69delAG pathogenic variant",
        "patients admitted to ICU with sepsis lactate",
        "odds ratio 1:2:3 dose response",
        "Parkinson's disease deep brain stimulation",
        "p < 0.05 statin trial 2019",
        "10.1056/NEJMoa1607141 semaglutide cardiovascular outcomes",
        "protein called klotho and ageing",
    ],
)
def test_scientific_queries_pass(query: str) -> None:
    assert find_identifiers(query) == []


def test_only_kinds_are_returned_never_the_values() -> None:
    found = find_identifiers("Mrs. Lopez 555-12-3456 jane@ex.org")
    assert found == ["email", "name", "ssn"]
    assert not any("Lopez" in k or "@" in k for k in found)
