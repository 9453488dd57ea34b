"""Synthetic patients for measuring what the privacy guard lets out (deterministic, seeded).

    for probe in probe_set(seed=16, size=240): probe.question, probe.patient_ref, probe.values

Each probe is a patient from one of many locales — names in Latin with diacritics, Cyrillic,
Greek, Arabic, Hebrew, Devanagari, Tamil, Thai, Georgian, CJK, Korean, plus invented names that
no name list holds — with a date of birth in one of many formats, a phone in that country's
form, a record number of one of many shapes, a street address from that country's Faker
provider and an e-mail, embedded in a realistic clinical question (some with labels, some with
the bare values). `values` maps each identifier class to the value that must never leave.
Used by tests/privacy and bench/privacy_probe.py; nothing here is real.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from faker import Faker

CLASSES = ("name", "dob", "phone", "mrn", "address", "email")
LOCALES = (
    "en_US",
    "en_GB",
    "en_IN",
    "es_ES",
    "es_MX",
    "fr_FR",
    "de_DE",
    "it_IT",
    "pt_BR",
    "nl_NL",
    "pl_PL",
    "tr_TR",
    "vi_VN",
    "yo_NG",
    "zu_ZA",
    "sv_SE",
    "fi_FI",
    "cs_CZ",
    "ru_RU",
    "uk_UA",
    "el_GR",
    "ar_AA",
    "he_IL",
    "fa_IR",
    "hi_IN",
    "ta_IN",
    "th_TH",
    "ka_GE",
    "zh_CN",
    "zh_TW",
    "ja_JP",
    "ko_KR",
)
_SYLLABLES = [
    "ka",
    "zu",
    "mi",
    "ran",
    "tel",
    "vo",
    "shi",
    "nua",
    "bek",
    "oru",
    "dal",
    "ine",
    "sao",
    "yem",
    "pha",
    "gwi",
    "tso",
    "lek",
    "amo",
    "rith",
    "qua",
    "ixo",
]
_DOB_FORMATS = (
    "{d:02d}/{m:02d}/{y}",
    "{m}/{d}/{y}",
    "{y}-{m:02d}-{d:02d}",
    "{d:02d}.{m:02d}.{y}",
    "{d} {month} {y}",
    "{month} {d}, {y}",
    "{d}-{mon}-{y}",
    "{y}{m:02d}{d:02d}",
    "{y}年{m}月{d}日",
    "{d}. {de_month} {y}",
    "{d} de {es_month} de {y}",
    "{d:02d}/{m:02d}/{yy:02d}",
    "{mon} {d} {y}",
    "{y}/{m:02d}/{d:02d}",
)
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DE_MONTHS = [
    "Januar",
    "Februar",
    "März",
    "April",
    "Mai",
    "Juni",
    "Juli",
    "August",
    "September",
    "Oktober",
    "November",
    "Dezember",
]
_ES_MONTHS = [
    "enero",
    "febrero",
    "marzo",
    "abril",
    "mayo",
    "junio",
    "julio",
    "agosto",
    "septiembre",
    "octubre",
    "noviembre",
    "diciembre",
]
_MRN_SHAPES = (
    "########",
    "A#######",
    "MR-##-###-###",
    "HN-####-###",
    "####/#####",
    "K#X-####-Q",
    "##-###-###",
    "ZAC####",
    "P########",
    "###.###.###",
    "UR######",
    "AB-#####-C",
)
_DRUGS = (
    "denosumab",
    "metformin",
    "semaglutide",
    "apixaban",
    "methotrexate",
    "rituximab",
    "atorvastatin",
    "empagliflozin",
    "levothyroxine",
    "tenofovir",
    "zoledronic acid",
    "hydroxychloroquine",
)
_CONDITIONS = (
    "osteoporosis",
    "type 2 diabetes",
    "atrial fibrillation",
    "rheumatoid arthritis",
    "heart failure",
    "chronic kidney disease",
    "hepatitis B",
    "lupus nephritis",
    "hypothyroidism",
    "obesity",
)
_TEMPLATES = (
    (
        "Does {drug} reduce complications of {condition} for my patient {name} (DOB {dob}, MRN {mrn})? "
        "Phone {phone}, e-mail {email}, lives at {address}."
    ),
    "Pt {name}, born {dob}, record no. {mrn}, address: {address}; tel {phone}; {email}. Is {drug} safe in {condition}?",
    "{title} {name} ({email}; {phone}), {address}. DOB {dob}. MRN: {mrn}. Evidence for {drug} in {condition}?",
    "What dose of {drug} for {condition} in {name}, {dob}, {mrn}, {address}, {phone}, {email}?",
)
_TITLES = ("Mr", "Mrs", "Ms", "Dr", "Sra.", "Herr", "Frau", "Mme", "Sig.", "Pani")


@dataclass(frozen=True, slots=True)
class Probe:
    """One synthetic patient embedded in a question and a patient context."""

    locale: str
    question: str
    patient_ref: str
    values: dict[str, str]


def probe_set(seed: int = 16, size: int = 240) -> list[Probe]:
    """`size` probes, the same for the same seed."""
    from faker import Faker

    rng = random.Random(seed)  # noqa: S311 - seeded test text, not a secret
    fakers = {locale: Faker(locale) for locale in LOCALES}
    for i, faker in enumerate(fakers.values()):
        faker.seed_instance(seed * 1000 + i)
    probes = []
    for n in range(size):
        locale = LOCALES[n % len(LOCALES)]
        faker = fakers[locale]
        values = {
            "name": _invented_name(rng)
            if n % 7 == 6
            else f"{faker.first_name()} {faker.last_name()}",
            "dob": _dob(rng, n),
            "phone": _phone(faker),
            "mrn": _mrn(rng, n),
            "address": " ".join(faker.address().split()),
            "email": _email(faker, rng),
        }
        fields = {
            **values,
            "drug": rng.choice(_DRUGS),
            "condition": rng.choice(_CONDITIONS),
            "title": rng.choice(_TITLES),
        }
        question = _TEMPLATES[n % len(_TEMPLATES)].format(**fields)
        patient_ref = (
            f"{fields['title']} {values['name']}, DOB {values['dob']}, MRN {values['mrn']}; home {values['address']}; "
            f"call {values['phone']} or write to {values['email']}. Follow-up for {fields['condition']}."
        )
        probes.append(
            Probe(locale=locale, question=question, patient_ref=patient_ref, values=values)
        )
    return probes


def _invented_name(rng: random.Random) -> str:
    def word() -> str:
        return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()

    return f"{word()} {word()}"


def _dob(rng: random.Random, n: int) -> str:
    y, m, d = rng.randint(1931, 2005), rng.randint(1, 12), rng.randint(1, 28)
    return _DOB_FORMATS[n % len(_DOB_FORMATS)].format(
        d=d,
        m=m,
        y=y,
        yy=y % 100,
        month=_MONTHS[m - 1],
        mon=_MONTHS[m - 1][:3],
        de_month=_DE_MONTHS[m - 1],
        es_month=_ES_MONTHS[m - 1],
    )


def _phone(faker: Faker) -> str:
    number = faker.phone_number()
    return number.split(" x")[0].split("x")[0].strip()


def _mrn(rng: random.Random, n: int) -> str:
    shape = _MRN_SHAPES[n % len(_MRN_SHAPES)]
    return "".join(str(rng.randint(0, 9)) if c == "#" else c for c in shape)


def _email(faker: Faker, rng: random.Random) -> str:
    user = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(5, 9)))
    return f"{user}.{rng.randint(10, 99)}@{faker.free_email_domain()}"


def leaked_tokens(value: str, outbound: str) -> list[str]:
    """Tokens of an identifier value (3+ characters, or the whole value) found in `outbound` text."""
    import re

    folded = outbound.casefold()
    words = set(re.findall(r"\w+", folded))
    pieces = [value, *[t for t in re.findall(r"\w+", value) if len(t) >= 3]]
    leaks = []
    for piece in pieces:
        p = piece.casefold()
        if (p in words) if re.fullmatch(r"\w+", p) else (p in folded):
            leaks.append(piece)
    return leaks
