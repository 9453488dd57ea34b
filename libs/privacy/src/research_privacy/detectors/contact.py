"""Contact identifiers: e-mail addresses, web addresses (URL), IP addresses, phone and fax numbers,
US-shaped (`US`) and as other countries write them (`INTERNATIONAL`: + country code in any
grouping, a national number opening with 0)."""

from __future__ import annotations

import ipaddress
import re

from research_privacy.detectors.base import (
    EMAIL,
    FAX,
    IP,
    PHONE,
    URL,
    I,
    Recogniser,
    compiled,
    digit_count,
)


def _valid_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _phone_digits(value: str) -> bool:
    digits = re.sub(r"\D", "", value)
    return 10 <= len(digits) <= 15


_NUMERIC_DATE = re.compile(r"\(?\d{1,4}[/.\-]\d{1,2}[/.\-]\d{2,4}\)?")


def _phone(value: str) -> bool:
    digits = digit_count(value)
    if _NUMERIC_DATE.fullmatch(value.strip()):
        return False  # 03/14/1961 is a date
    if re.fullmatch(r"(?:1[89]|20)\d\d\s*[-–/]\s*(?:1[89]|20)\d\d", value.strip()):
        return False  # a span of years
    if (
        re.fullmatch(r"[\d.]+(?:\s*[-–]\s*[\d.]+)?", value.strip())
        and value.count(".") >= 1
        and "." in value[:4]
    ):
        return False  # decimals or a range of them
    return 8 <= digits <= 15 or (value.lstrip().startswith("+") and 7 <= digits <= 15)


US: tuple[Recogniser, ...] = (
    Recogniser(EMAIL, compiled(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b")),
    Recogniser(URL, compiled(r"\b(?:https?://|ftp://|www\.)[^\s<>\"')\]]*[^\s<>\"')\].,;:!?]", I)),
    Recogniser(
        IP, compiled(r"(?<!EC )(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.]\d)"), accept=_valid_ip
    ),
    Recogniser(
        IP, compiled(r"\b(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{1,4}\b", I), accept=_valid_ip
    ),  # also :: compressed,
    Recogniser(
        FAX,
        compiled(r"\bfax\b(?:\s*(?:no\.?|number|#))?\s*[:#]?\s*(\+?[\d(][\d\s().\-]{8,}\d)", I),
        1,
        _phone_digits,
    ),
    Recogniser(
        PHONE,
        compiled(r"(?<![\w.])(?:\+\d{1,3}[\s.\-]?)?\(?\d{3}\)?[\s.\-]\d{3}[\s.\-]\d{4}(?!\w|\.\d)"),
        accept=_phone_digits,
    ),
    Recogniser(
        PHONE,
        compiled(r"(?<![\w.])\+\d{1,3}[\s.\-]\(?\d{1,4}\)?(?:[\s.\-]\d{2,4}){2,4}(?!\w|\.\d)"),
        accept=_phone_digits,
    ),
    Recogniser(
        PHONE,
        compiled(
            r"\b(?:phone|tel|telephone|mobile|cell|pager)\b\.?\s*(?:no\.?|number|#)?\s*[:#]?\s*(\+?[\d(][\d\s().\-]{6,}\d)",
            I,
        ),
        1,
        _phone_digits,
    ),
)


INTERNATIONAL: tuple[Recogniser, ...] = (
    # Phones: + country code in any grouping, or a national number opening with 0.
    Recogniser(
        PHONE,
        re.compile(r"(?<![\w+])\+\s?\d{1,3}(?:[\s.\-/]?\(?\d{1,5}\)?){2,6}(?![\w])"),
        accept=_phone,
    ),
    Recogniser(
        PHONE,
        re.compile(r"(?<![\w.+])\(?0\s?\d{1,4}\)?(?:[\s.\-/]?\d{2,5}){2,4}(?!\w|\.\d)"),
        accept=_phone,
    ),
    Recogniser(
        PHONE,
        re.compile(r"(?<![\w.+])\(\d{2,4}\)\s?\d{3,4}[\s.\-]?\d{3,4}(?!\w|\.\d)"),
        accept=_phone,
    ),
    Recogniser(
        PHONE,
        re.compile(
            r"\b(?:phone|tel|tél|telefon|teléfono|telefone|telefono|mobile|mobil|móvil|cell|handy|gsm|whatsapp|"
            r"ph|mob)\b\.?\s*(?:no\.?|number|nr\.?|#)?\s*[:#]?\s*(\+?[\d(][\d\s().\-/]{5,}\d)",
            I,
        ),
        1,
    ),
)
