"""Identifier detection for outbound queries, shared with the researcher (research_privacy).

`find_identifiers` answers which HIPAA Safe Harbor categories a search query carries; the
connector refuses to send such a query to any outside source. Besides the recognisers, the
allow-list is asked (`research_privacy.unlisted_terms`): a query term outside the scientific
vocabulary that is shaped like an identifier — capitalised, in a non-Latin script, a known
given name or surname, or a number or capitalised code — refuses the query too, whatever its origin.
Unknown lowercase words still pass (a new drug name), so free-form queries keep working.
Only the kinds are returned, never the matched values, so nothing sensitive reaches logs or
audit rows.
"""

from __future__ import annotations

from research_privacy import find_identifiers as _find
from research_privacy import unlisted_terms
from research_privacy.vocabulary import is_latin, person_names

# research_privacy category → the kind names the connector reports and audits
_KINDS = {
    "NAME": "name",
    "DATE": "date",
    "AGE_OVER_89": "age",
    "PHONE": "phone",
    "FAX": "phone",
    "EMAIL": "email",
    "SSN": "ssn",
    "MRN": "record_number",
    "HEALTH_PLAN": "record_number",
    "ACCOUNT": "record_number",
    "LICENCE": "record_number",
    "VEHICLE_ID": "device_id",
    "DEVICE_ID": "device_id",
    "URL": "url",
    "IP_ADDRESS": "ip",
    "ADDRESS": "address",
    "ZIP_CODE": "address",
}


# What an outbound query is refused for even when nothing else in it shows a person: a search needs
# no calendar date or web address, and a clinician's "seen on March 5, 2024" names no one but dates
# a patient's visit. (The de-identifier reads text that shows no person as research and keeps a
# study's dates and URLs; a query that leaves the process is held to the person's reading here.)
_ALWAYS_PERSONAL = {"DATE", "URL", "IP_ADDRESS"}


def find_identifiers(text: str) -> list[str]:
    """Sorted, distinct identifier kinds found in `text` (empty for a scientific query)."""
    found = _find(text)
    if text:
        personal = [f for f in _find(text, personal=True) if f.category in _ALWAYS_PERSONAL]
        found = sorted(
            [
                *found,
                *(p for p in personal if all(p.end <= f.start or p.start >= f.end for f in found)),
            ],
            key=lambda f: f.start,
        )
    kinds = {_KINDS.get(f.category, f.category.lower()) for f in found}
    rest = text
    for f in reversed(found):  # what the recognisers named is reported once, by its own kind
        rest = rest[: f.start] + " " + rest[f.end :]
    for term in unlisted_terms(rest):
        if any(c.isdigit() for c in term):
            # Record numbers are digits or capitals with digits (A1234567, K9X-4421-Q); a lowercase
            # id such as a cache-busting hex token is not refused (the query builder drops it anyway).
            if term.isdigit() or any(c.isupper() for c in term):
                kinds.add("record_number")
        elif term[:1].isupper() or not is_latin(term) or term.casefold() in person_names():
            kinds.add("name")
    return sorted(kinds)
