"""What every detector is made of: the Safe Harbor categories, the `Recogniser` (a compiled
pattern with a category and, where the raw pattern is too eager, a validator) and the pattern
pieces more than one kind of identifier uses (capitalised words, name particles, month names)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

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

CAP = r"[A-Z][a-z]+(?:[-'][A-Z][a-z]+)?"


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


def compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


I = re.IGNORECASE


MONTH_WORDS = (
    # en, fr, de, es, pt, it, nl, ru (genitive), tr
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec "
    "janvier février fevrier mars avril mai juin juillet août aout septembre octobre novembre décembre decembre "
    "januar jänner februar märz maerz april mai juni juli august september oktober november dezember "
    "enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre "
    "janeiro fevereiro março marco maio junho julho setembro outubro dezembro "
    "gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre "
    "januari februari maart mei augustus "
    "января февраля марта апреля мая июня июля августа сентября октября ноября декабря "
    "ocak şubat mart nisan mayıs haziran temmuz ağustos eylül ekim kasım aralık"
)


MONTH = r"(?:" + "|".join(sorted(set(MONTH_WORDS.split()), key=len, reverse=True)) + r")"


PARTICLE = r"(?:de|del|della|di|da|do|dos|das|des|du|la|le|les|von|van|der|den|the|of|los|las|y|e)"


def digit_count(value: str) -> int:
    return sum(c.isdigit() for c in value)
