"""Dates finer than a year and ages over 89 (Safe Harbor allows a bare year and a younger age):
numeric, with month names, in words ("the second of June", "aged ninety-two"), and
(`INTERNATIONAL`) with month names in nine languages, CJK and compact forms."""

from __future__ import annotations

import re

from research_privacy.detectors.base import (
    AGE,
    DATE,
    MONTH,
    MONTH_WORDS,
    I,
    Recogniser,
    compiled,
)

_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
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


MONTH_NAMES = frozenset(MONTH_WORDS.split())


_DAY = r"(?:0?[1-9]|[12]\d|3[01])"


_YEAR = r"(?:1[89]\d\d|20\d\d|'?\d\d)"


def _compact_date(value: str) -> bool:
    month, day = int(value[4:6]), int(value[6:8])
    return 1 <= month <= 12 and 1 <= day <= 31


US: tuple[Recogniser, ...] = (
    # Dates finer than a year (a bare year is allowed by Safe Harbor).
    Recogniser(
        DATE,
        compiled(r"(?<![\d.,])\d{1,4}([/\-])\d{1,2}\1\d{2,4}(?![\d.,]\d)"),
        accept=_valid_numeric_date,
    ),
    Recogniser(
        DATE,
        compiled(r"(?<![\d.,])\d{1,2}\.\d{1,2}\.\d{4}(?![\d.,]\d)"),
        accept=_valid_numeric_date,
    ),
    Recogniser(DATE, compiled(r"\b" + _MONTHS + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?\b")),
    Recogniser(
        DATE,
        compiled(r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTHS + r"\.?(?:,?\s+\d{4})?\b"),
    ),
    Recogniser(DATE, compiled(r"\b" + _MONTHS + r"\.?\s+\d{4}\b")),
    Recogniser(
        DATE,
        compiled(
            r"\b(?:DOB|date of birth|born(?: on)?|admitted(?: on)?|discharged(?: on)?|died(?: on)?)\s*[:#]?\s*(\d{1,2}[/\-.]\d{1,2}(?:[/\-.]\d{2,4})?)",
            I,
        ),
        1,
    ),
    Recogniser(
        AGE, compiled(r"\b(?:9\d|1[0-4]\d)\s*-?\s*(?:years?|yrs?|y/?o)\b(?:[\s\-]*old)?", I)
    ),
    Recogniser(AGE, compiled(r"\baged?\s+(9\d|1[0-4]\d)\b", I), 1),
    # Ages over 89 in words ("aged ninety-two", "a ninety-one-year-old", "one hundred and two years old").
    Recogniser(
        AGE,
        compiled(
            r"\b(?:aged?|is|was|now|turned|turns|at)\s+("
            + _AGE_WORDS
            + r")(?:[\s\-]+years?(?:[\s\-]+old|\s+of\s+age)?)?\b",
            I,
        ),
        1,
    ),
    Recogniser(
        AGE,
        compiled(
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
        compiled(
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
        compiled(
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
        compiled(
            r"\b(?:on|since|until|till|seen|admitted|discharged|dated|reviewed)\s+(\d{1,2}/\d{1,2})(?!/?\d)",
            I,
        ),
        1,
        accept=_day_month,
    ),
)


INTERNATIONAL: tuple[Recogniser, ...] = (
    # Dates: day month year in any listed language, month day year, numeric with a month word, CJK, compact.
    Recogniser(
        DATE,
        re.compile(
            r"(?<!\w)"
            + _DAY
            + r"(?:st|nd|rd|th|er|º|°)?\.?\s*(?:de\s+|of\s+)?[-/ ]?"
            + MONTH
            + r"\.?"
            r"(?:[-/ ,]\s*(?:de\s+)?" + _YEAR + r"(?:\s*(?:г|г\.|года))?)?(?!\w)",
            I,
        ),
    ),
    Recogniser(
        DATE,
        re.compile(
            r"(?<!\w)"
            + MONTH
            + r"\.?[-/ ]\s*"
            + _DAY
            + r"(?:st|nd|rd|th)?,?[-/ ]\s*"
            + _YEAR
            + r"(?!\w)",
            I,
        ),
    ),
    Recogniser(
        DATE, re.compile(r"(?<!\w)" + MONTH + r"\.?,?\s+(?:de\s+)?(?:1[89]|20)\d\d(?!\w)", I)
    ),
    Recogniser(DATE, re.compile(r"\d{2,4}\s*[年년]\s*\d{1,2}\s*[月월](?:\s*\d{1,2}\s*[日일])?")),
    Recogniser(DATE, re.compile(r"(?<![\d.])\d{4}[./]\d{1,2}[./]\d{1,2}(?![\d.])")),
    Recogniser(DATE, re.compile(r"(?<![\w.])(?:19|20)\d{6}(?![\w.])"), accept=_compact_date),
    Recogniser(
        DATE,
        re.compile(
            r"\b(?:DOB|D\.O\.B\.?|date\s+of\s+birth|birth\s*date|born(?:\s+on)?|geb\.?|geboren(?:\s+am)?|née?\s+le|"
            r"nacid[oa](?:\s+el)?|fecha\s+de\s+nacimiento|data\s+di\s+nascita|data\s+de\s+nascimento|"
            r"geboortedatum|дата\s+рождения|生年月日|出生日期)\s*[:#]?\s*([^\s,;()]"
            r"[^,;()\n]{0,20}?\d)(?![\d/.\-])",
            I,
        ),
        1,
    ),
)
