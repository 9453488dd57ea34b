"""Identifier detection for outbound queries, shared with the researcher (research_privacy).

`find_identifiers` answers which HIPAA Safe Harbor categories a search query carries; the
connector refuses to send such a query to any outside source. Only the kinds are returned,
never the matched values, so nothing sensitive reaches logs or audit rows.
"""

from __future__ import annotations

from research_privacy import find_identifiers as _find

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


def find_identifiers(text: str) -> list[str]:
    """Sorted, distinct identifier kinds found in `text` (empty for a scientific query)."""
    return sorted({_KINDS.get(found.category, found.category.lower()) for found in _find(text)})
