"""Privacy guards for untrusted clinical text: sanitise → delimit → de-identify.

    from research_privacy import sanitise, delimit, deidentify, find_identifiers
    safe = delimit(sanitise(abstract))           # between <<<CLINICAL_DATA>>> markers
    deid = deidentify(safe)                       # deid.text has [NAME_1], [DATE_1], …
    deid.found                                    # [("NAME", "Jane Roe"), ("DATE", "03/14/2024"), …]
    find_identifiers("MRN 12345678")              # non-empty → refuse to send the query out
    outbound_query(question)                      # only known scientific terms: what a search may carry
    outbound_text(question).text                  # prose for a remote model: unknown tokens → [TERM_1]

Covers the HIPAA Safe Harbor categories that can be recognised in free text: names, dates
finer than a year, ages over 89, phone and fax numbers, e-mail addresses, SSNs, medical record,
health-plan, account and licence numbers, vehicle and device identifiers, URLs, IP addresses,
street addresses and ZIP codes, in US and international forms (`detectors`, one module per kind). Outbound search
queries are built by allow-list (`outbound`, `vocabulary`): only terms of the shipped scientific
vocabulary leave, so a name or address no pattern knows is dropped all the same. No model, no network.
"""

from research_privacy.deidentify import Deidentified, Identifier, deidentify, find_identifiers
from research_privacy.outbound import outbound_query, outbound_text, unlisted_terms
from research_privacy.sanitise import (
    DATA_MARKER,
    NEUTRALISED,
    Sanitised,
    delimit,
    sanitise,
    sanitise_report,
)

__all__ = [
    "DATA_MARKER",
    "NEUTRALISED",
    "Deidentified",
    "Identifier",
    "Sanitised",
    "deidentify",
    "delimit",
    "find_identifiers",
    "outbound_query",
    "outbound_text",
    "sanitise",
    "sanitise_report",
    "unlisted_terms",
]
