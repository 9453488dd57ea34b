"""Privacy guards for untrusted clinical text: sanitise → delimit → de-identify.

    from research_privacy import sanitise, delimit, deidentify, find_identifiers
    safe = delimit(sanitise(abstract))           # between <<<CLINICAL_DATA>>> markers
    deid = deidentify(safe)                       # deid.text has [NAME_1], [DATE_1], …
    deid.found                                    # [("NAME", "Jane Roe"), ("DATE", "03/14/2024"), …]
    find_identifiers("MRN 12345678")              # non-empty → refuse to send the query out

Covers the HIPAA Safe Harbor categories that can be recognised in free text: names, dates
finer than a year, ages over 89, phone and fax numbers, e-mail addresses, SSNs, medical record,
health-plan, account and licence numbers, vehicle and device identifiers, URLs, IP addresses,
street addresses and ZIP codes. Pure patterns plus name lists: no model, no network.
"""

from research_privacy.deidentify import Deidentified, Identifier, deidentify, find_identifiers
from research_privacy.sanitise import DATA_MARKER, NEUTRALISED, Sanitised, delimit, sanitise, sanitise_report

__all__ = [
    "DATA_MARKER",
    "NEUTRALISED",
    "Deidentified",
    "Identifier",
    "Sanitised",
    "deidentify",
    "delimit",
    "find_identifiers",
    "sanitise",
    "sanitise_report",
]
