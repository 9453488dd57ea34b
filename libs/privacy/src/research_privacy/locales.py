"""Recognisers for identifiers written the way other countries write them.

The US-shaped patterns in `recognisers` miss "14. März 1956", "Calle Mayor 5", "+49 30 1234567"
and "Sra. Núñez". These add dates with month names in nine languages and CJK dates, street
forms that put the type first, last or inside the word (Hauptstraße), postcodes, international
and national phone forms, record numbers after labels in several languages, and titles and
patient cues that introduce a name. They feed the same `find_identifiers`; the allow-list
(`vocabulary`) stays the last word for anything they still miss.
"""

from __future__ import annotations

import re

from research_privacy.recognisers import ADDRESS, DATE, MRN, NAME, PHONE, Recogniser
from research_privacy.vocabulary import known_word

_I = re.IGNORECASE
_MONTH_WORDS = (
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
MONTH_NAMES = frozenset(_MONTH_WORDS.split())
_MONTH = r"(?:" + "|".join(sorted(set(_MONTH_WORDS.split()), key=len, reverse=True)) + r")"
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_YEAR = r"(?:1[89]\d\d|20\d\d|'?\d\d)"

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
_PARTICLE = r"(?:de|del|della|di|da|do|dos|das|des|du|la|le|les|von|van|der|den|the|of|los|las|y|e)"
_STREET_WORDS = r"(?:(?:" + _NAMEWORD + r"|" + _PARTICLE + r"|\d{1,3}(?:st|nd|rd|th)?)\s+){0,4}"
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

TITLES = (
    r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Madam|Mme|Mlle|M|Monsieur|Madame|Herr|Frau|Hr|Fr|Sr|Sra|Srta|Señor|Señora|"
    r"Don|Doña|Dña|Sig|Sig\.ra|Signor|Signora|Dott|Dott\.ssa|Dhr|Mevr|Pan|Pani|Gospodin|Gospozha|Shri|Smt|"
    r"Kumari|Sayın|Bay|Bayan|Ms\.|Mrs\.)"
)
# Phrases after which the next unknown words are a person: "my patient", "pt", "DOB", "named".
PATIENT_CUES = re.compile(
    r"\b(?:my\s+patient|our\s+patient|the\s+patient|patient|pt|pts|client|resident|case\s+of|named|name|"
    r"called|dob|d\.o\.b|born|son|daughter|wife|husband|mother|father|sister|brother|spouse|partner|"
    r"guardian|caregiver|relative|next\s+of\s+kin|contact|seen\s+by|referred\s+by|signed\s+by|attending|"
    r"dear|nurse|physician|patient(?:e|in)|paciente|patiënt|pacjent|пациент(?:ка)?|"
    + TITLES.replace("|M|", "|")
    + r")\b\.?\s*[:,]?",
    _I,
)


def _digits(value: str) -> int:
    return sum(c.isdigit() for c in value)


_NUMERIC_DATE = re.compile(r"\(?\d{1,4}[/.\-]\d{1,2}[/.\-]\d{2,4}\)?")


def _phone(value: str) -> bool:
    digits = _digits(value)
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


def _compact_date(value: str) -> bool:
    month, day = int(value[4:6]), int(value[6:8])
    return 1 <= month <= 12 and 1 <= day <= 31


RECOGNISERS: tuple[Recogniser, ...] = (
    # Dates: day month year in any listed language, month day year, numeric with a month word, CJK, compact.
    Recogniser(
        DATE,
        re.compile(
            r"(?<!\w)"
            + _DAY
            + r"(?:st|nd|rd|th|er|º|°)?\.?\s*(?:de\s+|of\s+)?[-/ ]?"
            + _MONTH
            + r"\.?"
            r"(?:[-/ ,]\s*(?:de\s+)?" + _YEAR + r"(?:\s*(?:г|г\.|года))?)?(?!\w)",
            _I,
        ),
    ),
    Recogniser(
        DATE,
        re.compile(
            r"(?<!\w)"
            + _MONTH
            + r"\.?[-/ ]\s*"
            + _DAY
            + r"(?:st|nd|rd|th)?,?[-/ ]\s*"
            + _YEAR
            + r"(?!\w)",
            _I,
        ),
    ),
    Recogniser(
        DATE, re.compile(r"(?<!\w)" + _MONTH + r"\.?,?\s+(?:de\s+)?(?:1[89]|20)\d\d(?!\w)", _I)
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
            _I,
        ),
        1,
    ),
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
            _I,
        ),
        1,
    ),
    # Record numbers after a label, in several languages and shapes (A1234567, HN-0042-117, 2023/00981).
    Recogniser(
        MRN,
        re.compile(
            r"\b(?:(?:MRN|NHS|NHI|CHI|URN|EHR|EMR|fallnummer|patientennummer|expediente|dossier|historia\s+clínica|"
            r"prontuário|prontuario|cartella(?:\s+clinica)?)\b\.?(?:\s*(?:number|num|no|nr|nº|n°|#|id|code))?"
            r"|(?:ID|PID|HN|MR|UR|record|chart|file|case|hosp|hospital|admission|encounter|accession|registration|patient|"
            r"member|insurance|policy)\b\.?\s*(?:number|num|no|nr|nº|n°|#|id|code|:)"
            r"|(?:ID|PID)\b)\.?\s*[:#]?\s*"
            r"([A-Z]{0,4}[\s\-/]?\d[\dA-Z]*(?:[\s\-/.]\d[\dA-Z]*){0,4}(?:-[A-Z]{1,3})?)\b",
            _I,
        ),
        1,
        accept=lambda v: _digits(v) >= 3,
    ),
    Recogniser(
        MRN,
        re.compile(
            r"(?<![\w\-/])(?=[A-Z0-9\-/]*\d{3})[A-Z]{1,4}[\-/]?\d[\dA-Z]*(?:[\-/]\d[\dA-Z]*){1,3}(?:-[A-Z]{1,3})?(?![\w\-/])"
        ),
        accept=lambda v: _digits(v) >= 5,
    ),
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
    ),  # "During 3 years" is no Ring street
    Recogniser(
        ADDRESS,
        re.compile(
            r"\b(?:lives|living|resides|residing|resident|wohnhaft|domiciliad[oa]|habite|vive|woont|mieszka)"
            r"\s+(?:at|in|on|en|à|a|in\s+der|op|na|w)\s+(" + _CLAUSE + r")",
            _I,
        ),
        1,
        needs_person=True,
    ),
    Recogniser(
        ADDRESS,
        re.compile(
            r"\b(?:address|addr|adresse|dirección|direccion|endereço|indirizzo|adres|адрес|home|residence|domicile|"
            r"domicilio|wohnort|anschrift)\b\s*[:#]\s*(" + _CLAUSE + r")",
            _I,
        ),
        1,
    ),
    Recogniser(
        ADDRESS,
        re.compile(
            r"\b(?:home\s+address|residential\s+address|postal\s+address|mailing\s+address|home)\s+(?=\S*\d)("
            + _CLAUSE
            + r")",
            _I,
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
    # Names after a title in any of the listed languages (Sra. Núñez, Herr Müller, Dott.ssa Bianchi).
    Recogniser(
        NAME,
        re.compile(
            r"(?<!\w)"
            + TITLES
            + r"\.?\s+((?:[A-ZÀ-ÖØ-Þ]\.\s*)*[A-ZÀ-ÖØ-Þ][\w'’\-]+(?:\s+(?:"
            + _PARTICLE
            + r"\s+)?(?!(?i:"
            + _MONTH
            + r")\b)[A-ZÀ-ÖØ-Þ][\w'’\-]+){0,3})"
        ),
        1,
    ),
)
