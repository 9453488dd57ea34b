"""Pattern recognisers for the HIPAA Safe Harbor identifier categories.

Each recogniser is a compiled pattern with a category and, where the raw pattern is too
eager, a validator. Context-keyed patterns ("MRN: …", "Fax …", "licence no. …") catch the
numbers that look like any other number without their label. Names come from three cues:
an honorific ("Dr. Alvarez"), a context word ("patient Jane Roe", "Name: …"), or a common US
given name or surname (Faker's en_US lists) next to another capitalised word.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

NAME = "NAME"
DATE = "DATE"
AGE = "AGE_OVER_89"
PHONE = "PHONE"
FAX = "FAX"
EMAIL = "EMAIL"
SSN = "SSN"
MRN = "MRN"
HEALTH_PLAN = "HEALTH_PLAN"
ACCOUNT = "ACCOUNT"
LICENCE = "LICENCE"
VEHICLE = "VEHICLE_ID"
DEVICE = "DEVICE_ID"
URL = "URL"
IP = "IP_ADDRESS"
ADDRESS = "ADDRESS"
ZIP = "ZIP_CODE"

_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_ID = r"[A-Z0-9][A-Z0-9\-/]{3,}[0-9][A-Z0-9\-]*"
_CAP = r"[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?"
_STREET = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter|"
    r"Circle|Cir|Highway|Hwy|Parkway|Pkwy|Square|Sq|Trail|Trl|Row)"
)
_STATES = (
    r"(?:AL|AK|AZ|AR|CA|CO|CT|DE|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|"
    r"ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|DC)"
)


_UNITS = "one two three four five six seven eight nine"
_AGE_WORDS = (
    r"(?:ninety(?:[\s\-](?:"
    + _UNITS.replace(" ", "|")
    + r"))?|(?:one|a)\s+hundred(?:\s+(?:and\s+)?(?:"
    + (
        _UNITS
        + " ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
    ).replace(" ", "|")
    + r"))?)"
)
_ORDINAL_WORDS = (
    r"(?:(?:twenty|thirty)[\s\-](?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)|"
    r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|"
    r"fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|thirtieth)"
)


def _day_month(value: str) -> bool:
    first, second = (int(p) for p in value.split("/"))
    return (1 <= first <= 31 and 1 <= second <= 12) or (1 <= first <= 12 and 1 <= second <= 31)


@dataclass(frozen=True, slots=True)
class Recogniser:
    category: str
    pattern: re.Pattern[str]
    group: int = 0
    accept: Callable[[str], bool] | None = None
    # Only in a text about a person (`science.about_a_person`): "resides in the cytoplasm" is no address.
    needs_person: bool = False

    def spans(self, text: str) -> Iterator[tuple[int, int, str]]:
        for match in self.pattern.finditer(text):
            value = match.group(self.group)
            if not value or (self.accept is not None and not self.accept(value)):
                continue
            yield match.start(self.group), match.end(self.group), value


def _valid_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _valid_numeric_date(value: str) -> bool:
    parts = [int(p) for p in re.split(r"[/\-.]", value) if p.isdigit()]
    if len(parts) != 3:
        return False
    if parts[0] > 31:  # ISO: year-month-day
        year, month, day = parts
    else:
        year = parts[2]
        month, day = (parts[0], parts[1]) if parts[0] <= 12 else (parts[1], parts[0])
    return 1 <= month <= 12 and 1 <= day <= 31 and (year < 100 or 1800 <= year <= 2200)


def _phone_digits(value: str) -> bool:
    digits = re.sub(r"\D", "", value)
    return 10 <= len(digits) <= 15


def _compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


I = re.IGNORECASE

RECOGNISERS: tuple[Recogniser, ...] = (
    Recogniser(EMAIL, _compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b")),
    Recogniser(URL, _compile(r"\b(?:https?://|ftp://|www\.)[^\s<>\"')\]]*[^\s<>\"')\].,;:!?]", I)),
    Recogniser(
        IP, _compile(r"(?<!EC )(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.]\d)"), accept=_valid_ip
    ),
    Recogniser(
        IP, _compile(r"\b(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{1,4}\b", I), accept=_valid_ip
    ),  # also :: compressed
    Recogniser(SSN, _compile(r"\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b")),
    Recogniser(
        SSN,
        _compile(
            r"\b(?:SSN|social security(?: number| no\.?)?)\s*[:#]?\s*(\d{3}[- ]?\d{2}[- ]?\d{4})\b",
            I,
        ),
        1,
    ),
    Recogniser(
        FAX,
        _compile(r"\bfax\b(?:\s*(?:no\.?|number|#))?\s*[:#]?\s*(\+?[\d(][\d\s().\-]{8,}\d)", I),
        1,
        _phone_digits,
    ),
    Recogniser(
        PHONE,
        _compile(r"(?<![\w.])(?:\+\d{1,3}[\s.\-]?)?\(?\d{3}\)?[\s.\-]\d{3}[\s.\-]\d{4}(?!\w|\.\d)"),
        accept=_phone_digits,
    ),
    Recogniser(
        PHONE,
        _compile(r"(?<![\w.])\+\d{1,3}[\s.\-]\(?\d{1,4}\)?(?:[\s.\-]\d{2,4}){2,4}(?!\w|\.\d)"),
        accept=_phone_digits,
    ),
    Recogniser(
        PHONE,
        _compile(
            r"\b(?:phone|tel|telephone|mobile|cell|pager)\b\.?\s*(?:no\.?|number|#)?\s*[:#]?\s*(\+?[\d(][\d\s().\-]{6,}\d)",
            I,
        ),
        1,
        _phone_digits,
    ),
    Recogniser(
        MRN,
        _compile(
            r"\b(?:MRN|medical record(?: number| no\.?| #)?|record (?:number|no\.?|#)|chart (?:number|no\.?|#)|"
            r"patient (?:id|number|no\.?)|hospital (?:number|no\.?|id))(?![a-z])\s*[:#]?\s*("
            + _ID
            + r"|\d{4,})",
            I,
        ),
        1,
    ),
    Recogniser(MRN, _compile(r"\bMRN[\-:]?\d{4,}\b")),
    Recogniser(
        HEALTH_PLAN,
        _compile(
            r"\b(?:health plan|beneficiary|member|insurance|policy|medicare|medicaid)(?: id| number| no\.?| #)\b\.?\s*[:#]?\s*("
            + _ID
            + r"|\d{4,})",
            I,
        ),
        1,
    ),
    Recogniser(
        ACCOUNT,
        _compile(
            r"\b(?:account|acct|a/c|iban|card)\b(?: id| number| no\.?| #)?\s*[:#]\s*("
            + _ID
            + r"|\d{4,})",
            I,
        ),
        1,
    ),
    Recogniser(
        ACCOUNT,
        _compile(r"\b(?:account|acct)(?: number| no\.?| #)\s*(" + _ID + r"|\d{4,})", I),
        1,
    ),
    Recogniser(
        LICENCE,
        _compile(
            r"\b(?:licen[cs]e|certificate|cert\.?|DEA|NPI|passport|driver'?s licen[cs]e)\b(?: id| number| no\.?| #)?"
            r"\s*[:#]?\s*(" + _ID + r"|\d{5,})",
            I,
        ),
        1,
    ),
    Recogniser(
        VEHICLE,
        _compile(
            r"\b(?:VIN|licen[cs]e plate|plate(?: no\.?| number))\b\s*[:#]?\s*([A-Z0-9\-]{5,17})\b",
            I,
        ),
        1,
    ),
    Recogniser(
        VEHICLE,
        _compile(r"(?-i:\b[A-HJ-NPR-Z0-9]{17}\b)"),
        accept=lambda v: bool(re.search(r"\d", v)) and bool(re.search(r"[A-Z]", v)),
    ),
    Recogniser(
        DEVICE,
        _compile(
            r"\b(?:device|serial|s/n|sn|implant|pacemaker|imei|udi)\b(?: id| number| no\.?| #)?\s*[:#]\s*("
            + _ID
            + r"|\d{5,})",
            I,
        ),
        1,
    ),
    Recogniser(
        DEVICE,
        _compile(r"\b(?:serial|imei|udi)(?: id| number| no\.?| #)\s*(" + _ID + r"|\d{5,})", I),
        1,
    ),
    # Dates finer than a year (a bare year is allowed by Safe Harbor).
    Recogniser(
        DATE,
        _compile(r"(?<![\d.,])\d{1,4}([/\-])\d{1,2}\1\d{2,4}(?![\d.,]\d)"),
        accept=_valid_numeric_date,
    ),
    Recogniser(
        DATE,
        _compile(r"(?<![\d.,])\d{1,2}\.\d{1,2}\.\d{4}(?![\d.,]\d)"),
        accept=_valid_numeric_date,
    ),
    Recogniser(DATE, _compile(r"\b" + _MONTHS + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?\b")),
    Recogniser(
        DATE,
        _compile(r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTHS + r"\.?(?:,?\s+\d{4})?\b"),
    ),
    Recogniser(DATE, _compile(r"\b" + _MONTHS + r"\.?\s+\d{4}\b")),
    Recogniser(
        DATE,
        _compile(
            r"\b(?:DOB|date of birth|born(?: on)?|admitted(?: on)?|discharged(?: on)?|died(?: on)?)\s*[:#]?\s*(\d{1,2}[/\-.]\d{1,2}(?:[/\-.]\d{2,4})?)",
            I,
        ),
        1,
    ),
    Recogniser(
        AGE, _compile(r"\b(?:9\d|1[0-4]\d)\s*-?\s*(?:years?|yrs?|y/?o)\b(?:[\s\-]*old)?", I)
    ),
    Recogniser(AGE, _compile(r"\baged?\s+(9\d|1[0-4]\d)\b", I), 1),
    # Ages over 89 in words ("aged ninety-two", "a ninety-one-year-old", "one hundred and two years old").
    Recogniser(
        AGE,
        _compile(
            r"\b(?:aged?|is|was|now|turned|turns|at)\s+("
            + _AGE_WORDS
            + r")(?:[\s\-]+years?(?:[\s\-]+old|\s+of\s+age)?)?\b",
            I,
        ),
        1,
    ),
    Recogniser(
        AGE,
        _compile(
            r"\b(?:"
            + _AGE_WORDS
            + r")[\s\-]+(?:years?[\s\-]+old|year[\s\-]+old|years\s+of\s+age|yo|y/o)\b",
            I,
        ),
    ),
    # Dates in words ("the second of June", "twenty-eighth July 2024", "June the 5th") and a day and
    # month tied to an event ("seen on 24/10", "since 13/09").
    Recogniser(
        DATE,
        _compile(
            r"\b(?:the\s+)?"
            + _ORDINAL_WORDS
            + r"\s+(?:of\s+)?"
            + _MONTHS
            + r"\b\.?(?:,?\s+\d{4})?",
            I,
        ),
    ),
    Recogniser(
        DATE,
        _compile(
            r"\b"
            + _MONTHS
            + r"\.?\s+(?:the\s+)?(?:"
            + _ORDINAL_WORDS
            + r"|\d{1,2}(?:st|nd|rd|th))\b(?:,?\s+\d{4})?",
            I,
        ),
    ),
    Recogniser(
        DATE,
        _compile(
            r"\b(?:on|since|until|till|seen|admitted|discharged|dated|reviewed)\s+(\d{1,2}/\d{1,2})(?!/?\d)",
            I,
        ),
        1,
        accept=lambda v: _day_month(v),
    ),
    # National numbers after their label: NHS, CHI, CPR, SSN, Medicare / Medicaid (MBI), BSN, AHV,
    # PESEL, personnummer, Aadhaar, SIN, IHI — spaced, dotted or hyphenated groups.
    Recogniser(
        SSN,
        _compile(
            r"\b(?i:NHS|CHI|CPR|SSN|SIN|BSN|AHV|AVS|NIR|PESEL|personnummer|Aadhaar|IHI|MBI|OHIP|Medicare|Medicaid|"
            r"social\s+security|national\s+insurance|national\s+id(?:entity)?|health\s+card|insurance)"
            r"(?:\s+(?i:number|no\.?|nr\.?|num|#|id|card|card\s+number|card\s+no\.?))?\s*[:#]?\s*"
            r"((?=[A-Za-z0-9]*\d)[A-Za-z0-9]+(?:[\s.\-/](?=[A-Za-z0-9]*\d)[A-Za-z0-9]+){0,4})\b"
        ),
        1,
        accept=lambda v: (
            sum(c.isdigit() for c in v) >= 6 or (len(v) >= 10 and sum(c.isdigit() for c in v) >= 3)
        ),
    ),
    # Irish Eircodes (D02 X285).
    Recogniser(
        ZIP,
        _compile(
            r"(?<!\w)[AC-FHKNPRTV-Y]\d[0-9W]\s?(?=[0-9A-Z]*[A-Z])(?=[0-9A-Z]*\d)[AC-FHKNPRTV-Y0-9]{4}(?!\w)"
        ),
    ),
    # Addresses: a house number and a street, optional unit, city, state and ZIP.
    Recogniser(
        ADDRESS,
        _compile(
            r"\b\d{1,6}\s+(?:[A-Z][A-Za-z]*\.?\s+){1,4}" + _STREET + r"\b\.?"
            r"(?:,?\s*(?:Apt|Apartment|Suite|Ste|Unit|#)\.?\s*[A-Za-z0-9\-]+)?"
            r"(?:,\s*"
            + _CAP
            + r"(?:\s"
            + _CAP
            + r")*)?(?:,?\s*"
            + _STATES
            + r")?(?:\s+\d{5}(?:-\d{4})?)?"
        ),
    ),
    Recogniser(ADDRESS, _compile(r"\bP\.?\s?O\.?\s+Box\s+\d+\b", I)),
    Recogniser(
        ZIP,
        _compile(r"\b" + _CAP + r"(?:\s" + _CAP + r")*,\s*" + _STATES + r"\s+(\d{5}(?:-\d{4})?)\b"),
    ),
    Recogniser(
        ZIP,
        _compile(
            r"\b(?:zip|zip code|postal code|postcode)\b\s*[:#]?\s*(\d{5}(?:-\d{4})?|[A-Z0-9]{2,4}\s?[A-Z0-9]{3})\b",
            I,
        ),
        1,
    ),
    # Names.
    Recogniser(
        NAME,
        _compile(
            r"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Madam)\.?\s+((?:[A-Z]\.\s*)*"
            + _CAP
            + r"(?:\s+(?:[A-Z]\.\s*)*"
            + _CAP
            + r"){0,2})"
        ),
        1,
    ),
    Recogniser(
        NAME,
        _compile(
            r"\b(?i:patient|pt\.?|name|named|called|son|daughter|wife|husband|mother|father|spouse|sister|brother|"
            r"guardian|caregiver|contact|seen by|referred by|signed by|attending|dear|nurse|physician)"
            r"(?:\s+(?i:is|was|of))?\s*[:,]?\s+((?:"
            + _CAP
            + r"|[A-Z]\.)(?:\s+(?:"
            + _CAP
            + r"|[A-Z]\.)){0,2})",
        ),
        1,
        accept=lambda v: _looks_like_name(v),
    ),
)


@lru_cache(maxsize=1)
def name_lists() -> tuple[frozenset[str], frozenset[str]]:
    """Common US given names and surnames (Faker's en_US lists), minus everyday words."""
    from faker.providers.person.en_US import Provider

    common_words = {
        "Will",
        "Mark",
        "Grace",
        "Faith",
        "Joy",
        "Hope",
        "Summer",
        "Dawn",
        "April",
        "May",
        "June",
        "Gene",
        "Bill",
        "Guy",
        "Max",
        "Long",
        "Young",
        "White",
        "Black",
        "Brown",
        "Green",
        "Gray",
        "Rice",
        "Bell",
        "Hall",
        "Wall",
        "Hill",
        "Lane",
        "Page",
        "Case",
        "Chase",
        "Cell",
        "Field",
        "Rose",
        "Ray",
        "Don",
        "Art",
        "Carol",
        "Lee",
        "Price",
        "Cross",
        "Little",
        "Short",
        "Best",
    }
    given = frozenset(n for n in Provider.first_names if n not in common_words)
    surnames = frozenset(n for n in Provider.last_names if n not in common_words)
    return given, surnames


_NOT_NAMES = frozenset(
    [
        "The",
        "This",
        "That",
        "These",
        "Those",
        "A",
        "An",
        "And",
        "Or",
        "But",
        "In",
        "On",
        "At",
        "Of",
        "For",
        "With",
        "From",
        "By",
        "To",
        "Patient",
        "Patients",
        "Doctor",
        "Study",
        "Hospital",
        "Clinic",
        "University",
        "Department",
        "Group",
        "Trial",
        "Results",
        "Methods",
        "Background",
        "Conclusion",
        "Conclusions",
        "Objective",
        "Disease",
        "Syndrome",
        "Cancer",
        "Type",
        "Stage",
        "Grade",
        "Phase",
        "Day",
        "Week",
        "Month",
        "Year",
        "Table",
        "Figure",
        "Fig",
        "Total",
        "Mean",
        "Median",
        "Male",
        "Female",
        "Left",
        "Right",
        "Normal",
        "Positive",
        "Negative",
        "Control",
        "Controls",
        "Treatment",
        "Therapy",
        "Placebo",
        "Survey",
        "Outcomes",
        "Research",
        "Initiative",
        "Education",
        "Program",
        "Programme",
        "Registry",
        "Network",
        "Center",
        "Centre",
        "Institute",
        "Foundation",
        "Association",
        "Society",
        "Health",
        "Care",
        "Safety",
        "Quality",
        "Reported",
        "Experience",
        "Gene",
        "Set",
        "Cell",
        "Cells",
        "Protein",
        "Receptor",
        "Factor",
        "Index",
        "Score",
        "Scale",
        "National",
        "International",
        "American",
        "European",
        "Medical",
        "Clinical",
        "Public",
        "General",
        "Journal",
        "Review",
        "Report",
    ]
)
_WORD_ENDINGS = (
    "tion",
    "ment",
    "ics",
    "ology",
    "ness",
    "ity",
    "ive",
    "ase",
    "ine",
    "ide",
    "ol",
    "ing",
    "ous",
)


def _looks_like_name(value: str) -> bool:
    """A capitalised run after a person cue: a listed name, or 2–3 words that are not common ones."""
    tokens = [t.rstrip(".") for t in value.split()]
    if any(t in _NOT_NAMES for t in tokens):
        return False
    given, surnames = name_lists()
    if any(t in given or t in surnames for t in tokens):
        return True
    return len(tokens) >= 2 and not any(t.lower().endswith(_WORD_ENDINGS) for t in tokens)


# Lookaheads, so "Later John Smith" still yields "John Smith" after rejecting "Later John".
_PAIR = re.compile(r"(?=\b(" + _CAP + r")(\s+(?:[A-Z]\.\s*)?)(" + _CAP + r")\b)")
_INVERTED = re.compile(r"(?=\b(" + _CAP + r"),\s+(" + _CAP + r")\b)")


def name_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """`Given Surname`, `Given M. Surname` and `Surname, Given` pairs by the name lists."""
    given, surnames = name_lists()
    for match in _PAIR.finditer(text):
        first, last = match.group(1), match.group(3)
        if first in _NOT_NAMES or last in _NOT_NAMES:
            continue
        if first in given or (last in surnames and first in surnames):
            yield match.start(1), match.end(3), text[match.start(1) : match.end(3)]
    for match in _INVERTED.finditer(text):
        last, first = match.group(1), match.group(2)
        if last in surnames and first in given:
            yield match.start(1), match.end(2), text[match.start(1) : match.end(2)]
