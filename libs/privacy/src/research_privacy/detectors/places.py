"""Street addresses and postal codes: US-shaped (a house number, a street, unit, city, state and
ZIP; P.O. boxes; Irish Eircodes) and (`INTERNATIONAL`) street forms that put the type first,
last or inside the word (rue de la Paix, Calle Mayor 5, Hauptstraße), and postcodes."""

from __future__ import annotations

import re

from research_privacy.detectors.base import (
    ADDRESS,
    CAP,
    PARTICLE,
    ZIP,
    I,
    Recogniser,
    compiled,
)
from research_privacy.vocabulary import known_word

_STREET = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter|"
    r"Circle|Cir|Highway|Hwy|Parkway|Pkwy|Square|Sq|Trail|Trl|Row)"
)


_STATES = (
    r"(?:AL|AK|AZ|AR|CA|CO|CT|DE|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|"
    r"ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|DC)"
)


# Street types by language; a type may come after the name (Elm Street), before it (rue de la
# Paix, Calle Mayor) or be the end of one word (Hauptstraße, Storgatan, Nørregade).
_TYPE_AFTER = (
    r"(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl|terrace|close|"
    r"crescent|cres|grove|gardens|mews|row|square|sq|circle|cir|highway|hwy|parkway|pkwy|trail|"
    r"parade|pde|walk|rise|hill|view|green|wharf|quay|esplanade|promenade|alley|causeway|embankment|vale|heights|"
    r"wynd|gate|broadway|loop|bypass|expressway|freeway|pike|turnpike|crossing|plaza|commons|"
    r"marg|nagar|chowk|gali|salai|road|lorong|jalan)"
)


_BEFORE_WORDS = [
    "rue",
    "avenue",
    "av",
    "bd",
    "boulevard",
    "chemin",
    "allée",
    "allee",
    "impasse",
    "quai",
    "route",
    "place",
    "via",
    "viale",
    "vicolo",
    "corso",
    "piazza",
    "piazzale",
    "calle",
    "carrer",
    "avenida",
    "avda",
    "paseo",
    "plaza",
    "camino",
    "carrera",
    "rua",
    "travessa",
    "largo",
    "praça",
    "praca",
    "estrada",
    "alameda",
    "ul",
    "ulica",
    "ulitsa",
    "aleja",
    "straße",
    "strasse",
    "utca",
    "jalan",
    "soi",
    "thanon",
    "sokak",
    "cadde",
    "caddesi",
    "ronda",
    "travesía",
    "travesia",
    "glorieta",
    "pasaje",
    "cuesta",
    "vía",
    "urbanización",
    "callejón",
    "colonia",
    "retorno",
    "privada",
    "circuito",
    "cerrada",
    "andador",
    "prolongación",
    "calzada",
    "periférico",
    "viela",
    "vila",
    "ladeira",
    "rodovia",
    "setor",
    "quadra",
    "conjunto",
    "vereda",
    "passeio",
    "recanto",
    "jardim",
    "parque",
    "lorong",
    "persiaran",
    "lebuh",
    "lebuhraya",
    "taman",
    "gang",
    "đường",
    "phố",
    "ngõ",
    "sokağı",
    "bulvarı",
    "rua",
    "travessa",
]


_TYPE_BEFORE = r"(?:c/|" + "|".join(_BEFORE_WORDS) + r")"


# Type-first streets with the number last ("Via Roma 10") only when capitalised: "via Notch 1" is biology.
_TYPE_BEFORE_TITLED = r"(?:C/|" + "|".join(w[:1].upper() + w[1:] for w in _BEFORE_WORDS) + r")"


_TYPE_SUFFIX = (
    r"(?:straße|strasse|str|weg|gasse|platz|allee|ring|damm|ufer|steig|pfad|gracht|straat|laan|kade|plein|"
    r"gatan|gata|gaten|vej|veien|vegen|gade|katu|tie|utca|sokak|caddesi|pad|hof|dreef|singel|wal|markt|steeg|"
    r"stigen|vägen|gränd|torget|backe)"
)


_NAMEWORD = r"[A-ZÀ-ÖØ-Þ][\w'’.\-]*"


_STREET_WORDS = r"(?:(?:" + _NAMEWORD + r"|" + PARTICLE + r"|\d{1,3}(?:st|nd|rd|th)?)\s+){0,4}"


_HOUSE = r"\d{1,5}[A-Za-z]?(?:[-/]\d{1,4}[A-Za-z]?)?"


_POSTCODE = (
    r"(?:[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}"  # UK
    r"|[A-Z]\d[A-Z]\s?\d[A-Z]\d"  # Canada
    r"|\d{4}\s?[A-Z]{2}(?![a-z])"  # Netherlands
    r"|\d{3}-\d{4}"  # Japan
    r"|(?:[A-Z]{1,2}-)?\d{4,6})"  # most of Europe, India, China
)


# The rest of a clause after an address cue; an abbreviation's dot ("Edif. 733") does not end it.
_CLAUSE = r"(?:[^.;:()\n?]|\.(?=(?-i:\s*[\d,a-z(]|\S))){3,100}"


# A city of one or two words; the second is never the start of a UK postcode ("London NW1 6XE").
_CITY = r"[A-ZÀ-ÖØ-Þ][\w\-]+(?:\s(?![A-Z]{1,2}\d)[A-ZÀ-ÖØ-Þ][\w\-]+)?"


_TAIL = (
    r"(?:,?\s*(?:(?:apt|apartment|flat|suite|ste|unit|piso|étage|etage|bte|app|wohnung|#)\.?\s*[\w\-]+))?"
    r"(?:,\s*(?:"
    + _POSTCODE
    + r"\s+)?"
    + _CITY
    + r"(?:\s+"
    + _POSTCODE
    + r")?|,?\s+"
    + _POSTCODE
    + r"\s+"
    + _CITY
    + r")?"
    r"(?:,\s*" + _POSTCODE + r")?"
)


US: tuple[Recogniser, ...] = (
    # Irish Eircodes (D02 X285).
    Recogniser(
        ZIP,
        compiled(
            r"(?<!\w)[AC-FHKNPRTV-Y]\d[0-9W]\s?(?=[0-9A-Z]*[A-Z])(?=[0-9A-Z]*\d)[AC-FHKNPRTV-Y0-9]{4}(?!\w)"
        ),
    ),
    # Addresses: a house number and a street, optional unit, city, state and ZIP.
    Recogniser(
        ADDRESS,
        compiled(
            r"\b\d{1,6}\s+(?:[A-Z][A-Za-z]*\.?\s+){1,4}" + _STREET + r"\b\.?"
            r"(?:,?\s*(?:Apt|Apartment|Suite|Ste|Unit|#)\.?\s*[A-Za-z0-9\-]+)?"
            r"(?:,\s*"
            + CAP
            + r"(?:\s"
            + CAP
            + r")*)?(?:,?\s*"
            + _STATES
            + r")?(?:\s+\d{5}(?:-\d{4})?)?"
        ),
    ),
    Recogniser(ADDRESS, compiled(r"\bP\.?\s?O\.?\s+Box\s+\d+\b", I)),
    Recogniser(
        ZIP,
        compiled(r"\b" + CAP + r"(?:\s" + CAP + r")*,\s*" + _STATES + r"\s+(\d{5}(?:-\d{4})?)\b"),
    ),
    Recogniser(
        ZIP,
        compiled(
            r"\b(?:zip|zip code|postal code|postcode)\b\s*[:#]?\s*(\d{5}(?:-\d{4})?|[A-Z0-9]{2,4}\s?[A-Z0-9]{3})\b",
            I,
        ),
        1,
    ),
)


INTERNATIONAL: tuple[Recogniser, ...] = (
    # Addresses: number + name + type, number + type + name, type + name + number, Word-suffix + number.
    Recogniser(
        ADDRESS,
        re.compile(
            r"(?<!\w)"
            + _HOUSE
            + r",?\s+"
            + _STREET_WORDS
            + _NAMEWORD
            + r"\s+(?i:"
            + _TYPE_AFTER
            + r")\b\.?"
            + _TAIL
        ),
    ),
    Recogniser(
        ADDRESS,
        re.compile(
            r"(?<!\w)"
            + _HOUSE
            + r",?\s+(?i:"
            + _TYPE_BEFORE
            + r")\.?\s+"
            + _STREET_WORDS.replace("{0,4}", "{0,3}")
            + _NAMEWORD
            + _TAIL
        ),
    ),
    Recogniser(
        ADDRESS,
        re.compile(
            r"(?<!\w)"
            + _TYPE_BEFORE_TITLED
            + r"\.?\s+"
            + _STREET_WORDS.replace("{0,4}", "{0,3}")
            + _NAMEWORD
            + r",?\s+(?:n[º°o]\.?\s*)?"
            + _HOUSE
            + r"(?!\w)"
            + _TAIL
        ),
    ),
    Recogniser(
        ADDRESS,
        re.compile(
            r"(?<!\w)[A-ZÀ-ÖØ-Þ][\w\-]*(?i:"
            + _TYPE_SUFFIX
            + r")\.?\s+"
            + _HOUSE
            + r"(?!\w)"
            + _TAIL
        ),
        accept=lambda v: not known_word(v.split()[0].lower()),
    ),  # "During 3 years" is no Ring street,
    Recogniser(
        ADDRESS,
        re.compile(
            r"\b(?:lives|living|resides|residing|resident|wohnhaft|domiciliad[oa]|habite|vive|woont|mieszka)"
            r"\s+(?:at|in|on|en|à|a|in\s+der|op|na|w)\s+(" + _CLAUSE + r")",
            I,
        ),
        1,
        needs_person=True,
    ),
    Recogniser(
        ADDRESS,
        re.compile(
            r"\b(?:address|addr|adresse|dirección|direccion|endereço|indirizzo|adres|адрес|home|residence|domicile|"
            r"domicilio|wohnort|anschrift)\b\s*[:#]\s*(" + _CLAUSE + r")",
            I,
        ),
        1,
    ),
    Recogniser(
        ADDRESS,
        re.compile(
            r"\b(?:home\s+address|residential\s+address|postal\s+address|mailing\s+address|home)\s+(?=\S*\d)("
            + _CLAUSE
            + r")",
            I,
        ),
        1,
        needs_person=True,
    ),
    Recogniser(ADDRESS, re.compile(r",\s*[A-Z]{2,3}\s+\d{5}(?:-\d{4})?\b")),
    Recogniser(
        ADDRESS,
        re.compile(r"(?<!\w)(?:[A-Z]{1,2}\d[A-Z\d]?\s\d[A-Z]{2}|[A-Z]\d[A-Z]\s\d[A-Z]\d)(?!\w)"),
    ),
    Recogniser(ADDRESS, re.compile(r",\s*((?:[A-Z]{1,2}-)?\d{4,5}\s+" + _CITY + r")"), 1),
)
