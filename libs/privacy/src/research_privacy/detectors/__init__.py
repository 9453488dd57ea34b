"""The detectors: one module per kind of identifier, each a set of recognisers in US forms (`US`)
and as other countries write them (`INTERNATIONAL`), plus the rules for names no pattern or list
knows.

- `contact`: e-mail, URL, IP address, phone, fax;
- `ids`: SSN and national numbers, medical record, health-plan, account, licence, vehicle and
  device identifiers;
- `dates`: dates finer than a year, ages over 89;
- `places`: street addresses, postal codes;
- `names`: names after an honorific, a context word or a title, and common given names and
  surnames (`name_spans`);
- `people`: people named in context (a subject's name before a verb, clinicians, inverted
  "SURNAME, Given", a name grown over its particles);
- `unlisted`: names and addresses by the allow-list (capitalised runs no vocabulary knows, words
  after a patient cue, other scripts);
- `base`: the categories and the `Recogniser` they are all made of.

The flow is one way: `research_privacy.deidentify` reads the text with these, and they ask the
science guard (`research_privacy.science`) and the shipped vocabulary, which ask nothing back.
"""

from research_privacy.detectors import contact, dates, ids, names, places
from research_privacy.detectors.base import (
    ACCOUNT,
    ADDRESS,
    AGE,
    DATE,
    DEVICE,
    EMAIL,
    FAX,
    HEALTH_PLAN,
    IP,
    LICENCE,
    MRN,
    NAME,
    PHONE,
    SSN,
    URL,
    VEHICLE,
    ZIP,
    Recogniser,
)
from research_privacy.detectors.names import name_spans

# The US-shaped recognisers, then the international ones: on equal length a US pattern wins (a
# licence number stays a LICENCE).
RECOGNISERS: tuple[Recogniser, ...] = (*contact.US, *ids.US, *dates.US, *places.US, *names.US)
INTERNATIONAL: tuple[Recogniser, ...] = (
    *dates.INTERNATIONAL,
    *contact.INTERNATIONAL,
    *ids.INTERNATIONAL,
    *places.INTERNATIONAL,
    *names.INTERNATIONAL,
)

__all__ = [
    "ACCOUNT",
    "ADDRESS",
    "AGE",
    "DATE",
    "DEVICE",
    "EMAIL",
    "FAX",
    "HEALTH_PLAN",
    "INTERNATIONAL",
    "IP",
    "LICENCE",
    "MRN",
    "NAME",
    "PHONE",
    "RECOGNISERS",
    "SSN",
    "URL",
    "VEHICLE",
    "ZIP",
    "Recogniser",
    "name_spans",
]
