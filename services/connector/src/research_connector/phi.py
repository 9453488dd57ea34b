"""Identifier detection for outgoing queries: no personal identifier ever leaves the process.

The connector sends queries to third-party APIs, so a query must carry scientific topics only.
`find_identifiers` looks for the HIPAA Safe Harbor categories that can appear in a search
string — names with a personal title, dates finer than a year, phone and fax numbers, e-mail
addresses, medical record / account numbers, SSNs, street addresses, URLs and IP addresses —
and returns the *kinds* found (never the matched text, which would itself be PHI in a log).

It errs on the side of refusing: a false positive costs one search, a false negative leaks a
patient. It is deliberately small and pattern-based so it can later be swapped for the shared
de-identification library without touching callers.
"""

from __future__ import annotations

import ipaddress
import re

_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|Jun(?:e)?|Jul(?:y)?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_STREET = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl"
    r"|Terrace|Highway|Hwy|Parkway|Pkwy|Square|Sq)"
)

# Each kind with the patterns that reveal it. Titles are matched case-sensitively so that
# "MS" (multiple sclerosis) or "DR" (diabetic retinopathy) are not read as titles.
_PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = {
    "name": (
        re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Herr|Frau|Mme|Mlle)\.?\s+[A-Z][a-zA-Z'\-]+"),
        re.compile(r"\b[Pp]atient\s+(?:named|called)\s+[A-Z][a-z]+"),
        re.compile(r"\b[Pp]atient\s+[A-Z][a-z]+\s+[A-Z][a-z]+,?\s+(?:aged?|\d{1,3}\b)"),
    ),
    "date": (
        re.compile(r"\b\d{4}[-/.](?:0?[1-9]|1[0-2])[-/.](?:0?[1-9]|[12]\d|3[01])\b"),
        re.compile(r"\b(?:0?[1-9]|[12]\d|3[01])[-/.](?:0?[1-9]|[12]\d|3[01])[-/.](?:\d{4}|\d{2})\b"),
        re.compile(rf"\b{_MONTHS}\.?\s+(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?\b(?:,?\s*\d{{4}})?", re.I),
        re.compile(rf"\b(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\b", re.I),
        re.compile(rf"\b{_MONTHS}\.?\s+(?:19|20)\d{{2}}\b"),
        re.compile(r"\b(?:dob|d\.o\.b\.?|date of birth)\b", re.I),
    ),
    "phone": (
        re.compile(r"(?<![\w.])(?:\+?\d{1,3}[\s.-]?)?\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}\b"),
        re.compile(r"\+\d{1,3}[\s.-]?\d{2,4}[\s.-]?\d{3,4}[\s.-]?\d{3,4}\b"),
        re.compile(r"\b(?:phone|tel|telephone|fax)\s*[:#]?\s*\+?\d", re.I),
    ),
    "email": (re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),),
    "record_number": (
        re.compile(
            r"\b(?:MRN|medical record(?:\s+(?:number|no\.?))?|record\s+(?:number|no\.?|#)|patient\s+(?:id|number|no\.?)"
            r"|account\s+(?:number|no\.?)|acct|health plan(?:\s+number)?|beneficiary(?:\s+number)?)\s*[:#]?\s*[A-Z]*\d{3,}",
            re.I,
        ),
    ),
    "ssn": (
        re.compile(r"\b\d{3}-\d{2}-\d{4}\b"),
        re.compile(r"\b(?:SSN|social security(?:\s+number)?)\b", re.I),
    ),
    "address": (
        re.compile(rf"\b\d{{1,5}}\s+(?:[A-Z][a-z]+\.?\s+){{1,3}}{_STREET}\b\.?"),
        re.compile(r"\b(?:P\.?\s?O\.?\s+Box|zip(?:\s*code)?\s*[:#]?\s*\d{5})\b", re.I),
    ),
    "url": (re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.[\w-]+(?:\.[\w-]+)+\S*", re.I),),
}

_IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")


def _has_ip(text: str) -> bool:
    for candidate in (*_IPV4.findall(text), *_IPV6.findall(text)):
        try:
            ipaddress.ip_address(candidate)
        except ValueError:
            continue
        return True
    return False


def find_identifiers(text: str) -> list[str]:
    """The kinds of personal identifier found in `text`, sorted; empty when it is clean.

    Kinds: `name`, `date`, `phone`, `email`, `record_number`, `ssn`, `address`, `url`, `ip`.
    The matched values are never returned, so the result is safe to log and audit.
    """
    kinds = {kind for kind, patterns in _PATTERNS.items() if any(p.search(text) for p in patterns)}
    if _has_ip(text):
        kinds.add("ip")
    return sorted(kinds)
