"""Write `questions.jsonl`: invented clinician-style questions with every identifier span labelled.

    .venv/bin/python bench/data/deid/make_questions.py      # rewrites questions.jsonl (seeded, deterministic)

Run once, when the set was made; the committed `questions.jsonl` is the labelled set
`bench/deid.py` measures. Two halves: `dev` (the rules were tuned looking at its misses) and
`frozen` (never looked at while tuning). The halves share the question shapes but not one
value: each half draws its people, dates, numbers and addresses from its own pools, so a rule
fitted to a dev name does nothing for the frozen half. Nothing here is a real person.

Each line: {"id", "half", "text", "identifiers": [{"kind", "text", "start", "end"}]}.
"""

from __future__ import annotations

import calendar
import json
import random
import re
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("questions.jsonl")

# People, by half: given name, surname, and how a clinician might write the surname in lowercase.
PEOPLE = {
    "dev": [
        ("Priyanka", "Raghunathan"),
        ("Ingrid", "Halvorsen"),
        ("Tomasz", "Kowalczyk"),
        ("Aoife", "Ní Bhriain"),
        ("Oluwaseun", "Adebayo"),
        ("Lan", "Nguyen"),
        ("Mohammed", "al-Harbi"),
        ("Ahmad", "bin Ismail"),
        ("Pieter", "van der Berg"),
        ("Juan", "de la Fuente-Ortega"),
        ("Siobhán", "O'Sullivan"),
        ("Björn", "Lindqvist"),
        ("Zeynep", "Yılmaz"),
        ("Kenji", "Watanabe"),
        ("Chidi", "Okonkwo"),
        ("Mei-Ling", "Chen"),
        ("Fatima", "El Amrani"),
        ("Lars", "Mikkelsen"),
        ("Anneke", "de Vries"),
        ("Hamid", "Karimi"),
        ("Radka", "Novotná"),
        ("Thandiwe", "Dlamini"),
        ("Esperanza", "Quispe"),
        ("Dmitri", "Volkov"),
        ("Saoirse", "MacCarthy"),
        ("Giulia", "Bianchi"),
        ("Anjali", "Deshpande"),
        ("Kwabena", "Mensah"),
        ("Hye-jin", "Park"),
        ("Rafael", "dos Santos"),
        ("Eilidh", "McAllister"),
        ("Youssef", "Benali"),
    ],
    "frozen": [
        ("Ravindra", "Subramaniam"),
        ("Solveig", "Haugland"),
        ("Wojciech", "Zielinski"),
        ("Niamh", "Ní Dhomhnaill"),
        ("Babatunde", "Ogunleye"),
        ("Thi Hoa", "Tran"),
        ("Abdullah", "al-Qahtani"),
        ("Farid", "bin Yusof"),
        ("Maarten", "van den Heuvel"),
        ("Lucía", "de la Cruz-Marín"),
        ("Ciarán", "O'Donoghue"),
        ("Astrid", "Sundqvist"),
        ("Emre", "Korkmaz"),
        ("Haruto", "Nakamura"),
        ("Ifeoma", "Nwachukwu"),
        ("Jia-Hui", "Lin"),
        ("Khadija", "Ait Lahcen"),
        ("Søren", "Kjærgaard"),
        ("Femke", "de Jong"),
        ("Reza", "Tehrani"),
        ("Zdeňka", "Horáková"),
        ("Sipho", "Mahlangu"),
        ("Wayra", "Mamani"),
        ("Oleksandr", "Bondarenko"),
        ("Ruairí", "MacGiolla"),
        ("Alessandro", "Ferraro"),
        ("Meenakshi", "Iyengar"),
        ("Yaw", "Boateng"),
        ("Min-seo", "Choi"),
        ("Joaquim", "das Neves"),
        ("Catriona", "MacLeod"),
        ("Karim", "Haddad"),
    ],
}
TITLES = ("Mr", "Mrs", "Ms", "Dr", "Mr.", "Mrs.", "Miss", "Prof.")
CLINICAL_VERBS = (
    "was admitted",
    "presented",
    "was discharged",
    "developed",
    "reports",
    "has been on",
    "was started on",
    "was readmitted",
    "complains of",
    "underwent",
    "declined",
    "tolerated",
    "was seen",
    "is now on",
)
MONTHS = list(calendar.month_name)[1:]  # English: this script never sets a locale
ORDINALS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
    "twenty-first",
    "twenty-second",
    "twenty-third",
    "twenty-fourth",
    "twenty-fifth",
    "twenty-sixth",
    "twenty-seventh",
    "twenty-eighth",
]
AGE_WORDS = (
    "ninety",
    "ninety-one",
    "ninety-two",
    "ninety-three",
    "ninety-four",
    "ninety-five",
    "ninety-six",
    "ninety-seven",
    "ninety-eight",
    "ninety-nine",
    "one hundred",
    "one hundred and two",
)
STREETS = {
    "dev": [
        "{n} Maple Street",
        "{n} Kildare Close",
        "Flat {u}, {n} Gloucester Road",
        "{n} rue de la Paix, 75002 Paris",
        "Hauptstraße {n}, 10115 Berlin",
        "Calle Mayor {n}, 28013 Madrid",
        "{n} Jalan Ampang, 50450 Kuala Lumpur",
        "{n} Bedford Avenue, Brooklyn, NY 11211",
        "Keizersgracht {n}, 1015 CJ Amsterdam",
        "{n} Wattle Crescent",
        "ul. Długa {n}, 00-238 Warszawa",
        "Via Roma {n}, 10121 Torino",
        "{n} Harbour View Terrace",
        "apartment {u}, {n} Orchard Lane",
    ],
    "frozen": [
        "{n} Birchwood Drive",
        "{n} Larkspur Mews",
        "Unit {u}, {n} Ferntree Gully Road",
        "{n} avenue Jean Jaurès, 69007 Lyon",
        "Lindenweg {n}, 80331 München",
        "Avenida da Liberdade {n}, 1250-096 Lisboa",
        "{n} Lorong Kurau, 59100 Kuala Lumpur",
        "{n} Sycamore Lane, Austin, TX 78704",
        "Prinsengracht {n}, 1016 GV Amsterdam",
        "{n} Banksia Grove",
        "ul. Polna {n}, 61-001 Poznań",
        "Corso Italia {n}, 20122 Milano",
        "{n} Riverside Parade",
        "flat {u}, {n} Chestnut Row",
    ],
}
POSTCODES = {
    "dev": ["SW1A 1AA", "M5V 3L9", "EH8 9YL", "D02 X285", "02139", "3052", "BT7 1NN", "K1A 0B1"],
    "frozen": ["NW3 2QG", "V6B 4Y8", "G12 8QQ", "T12 K8AF", "60614", "4101", "CF10 3AT", "H3Z 2Y7"],
}
DOMAINS = {
    "dev": ["example.org", "mail.example.com", "example.no", "example.pl"],
    "frozen": ["example.net", "post.example.de", "example.ie", "example.co.uk"],
}

# Clinical content with scientific notation, so the identifiers sit in realistic surroundings.
CONTEXT = (
    "eGFR of 38",
    "HbA1c 8.2%",
    "apixaban 5 mg twice daily",
    "NYHA class III",
    "a β-blocker",
    "IFN-γ release assay positive",
    "TNF-α inhibitor",
    "LDL 4.1 mmol/L",
    "CHA2DS2-VASc 4",
    "ICD-10 I48.0",
    "BNT162b2 booster",
    "HER2-positive disease",
    "CD4 count 180 cells/µL",
    "ferritin 1,250 µg/L",
    "an EF of 35%",
    "PD-L1 ≥ 50%",
    "T2DM on metformin 1,000 mg",
    "QTc 480 ms",
    "INR 3.4",
    "BRCA1 carrier",
    "SGLT2 inhibitor",
    "NF-κB pathway",
    "Glasgow Coma Scale 13",
)
QUESTIONS = (
    "Should we switch to a DOAC?",
    "Is dose reduction needed?",
    "What does the evidence say about stopping it?",
    "Any trial data for this population?",
    "Is there an interaction to worry about?",
    "What is the risk of recurrence?",
    "Does the 2023 guideline still apply?",
    "Is surveillance enough?",
)


class Writer:
    """Builds one question left to right, noting each identifier's span."""

    def __init__(self) -> None:
        self.text = ""
        self.identifiers: list[dict[str, object]] = []

    def say(self, text: str) -> Writer:
        self.text += text
        return self

    def mark(self, kind: str, text: str) -> Writer:
        self.identifiers.append(
            {"kind": kind, "text": text, "start": len(self.text), "end": len(self.text) + len(text)}
        )
        self.text += text
        return self


class Pools:
    def __init__(self, half: str, rng: random.Random) -> None:
        self.half, self.rng = half, rng

    def person(self) -> tuple[str, str]:
        return self.rng.choice(PEOPLE[self.half])

    def context(self) -> str:
        return self.rng.choice(CONTEXT)

    def question(self) -> str:
        return self.rng.choice(QUESTIONS)

    def date(self) -> str:
        r = self.rng
        d, m, y = (
            r.randint(1, 28),
            r.randint(1, 12),
            r.randint(2019, 2026) if self.half == "dev" else r.randint(2018, 2026),
        )
        shapes = (
            f"{d} {MONTHS[m - 1][:3]} {y}",
            f"{MONTHS[m - 1]} {d}, {y}",
            f"{d:02d}/{m:02d}/{y}",
            f"{y}-{m:02d}-{d:02d}",
            f"{d}.{m}.{y}",
            f"the {ORDINALS[d - 1]} of {MONTHS[m - 1]}",
            f"{MONTHS[m - 1]} {d}",
            f"{d} {MONTHS[m - 1]}",
            f"{ORDINALS[d - 1]} {MONTHS[m - 1]} {y}",
            f"{d}{'st' if d in (1, 21) else 'th'} of {MONTHS[m - 1]}",
            f"{MONTHS[m - 1][:3]}. {d}",
            f"{d:02d}/{m:02d}",
        )
        return r.choice(shapes)

    def dob(self) -> str:
        r = self.rng
        d, m, y = r.randint(1, 28), r.randint(1, 12), r.randint(1925, 1990)
        return r.choice(
            (
                f"{d:02d}/{m:02d}/{y}",
                f"{y}-{m:02d}-{d:02d}",
                f"{d} {MONTHS[m - 1]} {y}",
                f"{MONTHS[m - 1][:3]} {d} {y}",
                f"{d}.{m:02d}.{y}",
            )
        )

    def age(self) -> tuple[str, str]:
        """(the phrase, the identifier inside it)."""
        r = self.rng
        n = r.randint(90, 104)
        word = r.choice(AGE_WORDS)
        return r.choice(
            (
                (f"aged {word}", word),
                (f"a {n}-year-old", f"{n}-year-old"),
                (f"{n} y/o", f"{n} y/o"),
                (f"{word} years old", word),
                (f"age {n}", str(n)),
                (f"a {word}-year-old", f"{word}-year-old"),
                (f"{n}yo", f"{n}yo"),
                (f"now {n} years of age", f"{n} years"),
            )
        )

    def phone(self) -> str:
        r = self.rng
        d = lambda k: "".join(str(r.randint(0, 9)) for _ in range(k))
        return r.choice(
            (
                f"+44 20 {d(4)} {d(4)}",
                f"+49 30 {d(6)}",
                f"+33 1 {d(2)} {d(2)} {d(2)} {d(2)}",
                f"({r.randint(201, 989)}) 555-{d(4)}",
                f"07700 {d(6)}",
                f"+1-{r.randint(201, 989)}-555-{d(4)}",
                f"+61 2 {d(4)} {d(4)}",
                f"+91 98{d(3)} {d(5)}",
                f"04{d(2)} {d(3)} {d(3)}",
                f"+45 {d(2)} {d(2)} {d(2)} {d(2)}",
                f"+353 87 {d(3)} {d(4)}",
                f"+234 803 {d(3)} {d(4)}",
            )
        )

    def record(self) -> tuple[str, str]:
        r = self.rng
        d = lambda k: "".join(str(r.randint(0, 9)) for _ in range(k))
        letter = lambda: r.choice("ABCDEFGHJKLMNPRSTUVWXZ")
        return r.choice(
            (
                ("MRN ", "00" + d(6)),
                ("hospital no. ", f"{letter()}{d(1)}{letter()}-{d(4)}"),
                ("record number ", f"20{d(2)}/{d(5)}"),
                ("MRN: ", f"{letter()}{d(7)}"),
                ("chart #", d(6)),
                ("(MRN ", d(8)),
                ("unit number ", f"{letter()}{letter()}{d(6)}"),
                ("hosp # ", d(7)),
            )
        )

    def national(self) -> tuple[str, str]:
        r = self.rng
        d = lambda k: "".join(str(r.randint(0, 9)) for _ in range(k))
        return r.choice(
            (
                ("NHS number ", f"{d(3)} {d(3)} {d(4)}"),
                ("NHS no ", d(10)),
                ("CPR ", f"{r.randint(10, 28):02d}{r.randint(1, 12):02d}{d(2)}-{d(4)}"),
                ("SSN ", f"{r.randint(100, 665)}-{d(2)}-{d(4)}"),
                ("Medicare ID ", f"{r.randint(1, 9)}EG{d(1)}-TE{d(1)}-MK{d(2)}"),
                ("Medicaid ", f"{d(8)}A"),
                ("social security number ", f"{r.randint(100, 665)} {d(2)} {d(4)}"),
                ("Medicare card ", f"{d(4)} {d(5)} {d(1)}"),
            )
        )

    def address(self) -> str:
        r = self.rng
        return r.choice(STREETS[self.half]).format(n=r.randint(2, 240), u=r.randint(1, 30))

    def postcode(self) -> str:
        return self.rng.choice(POSTCODES[self.half])

    def email(self, given: str, surname: str) -> str:
        clean = lambda s: re.sub(r"[^a-z]", "", s.lower().encode("ascii", "ignore").decode())
        return (
            self.rng.choice(
                (
                    f"{clean(given)}.{clean(surname)}",
                    f"{clean(given)[0]}{clean(surname)}",
                    f"{clean(surname)}{self.rng.randint(10, 99)}",
                )
            )
            + "@"
            + self.rng.choice(DOMAINS[self.half])
        )


def lowercase(name: str) -> str:
    return name.lower()


# Each shape writes one question; together they cover the forms clinicians type.
def shape_possessive(w: Writer, p: Pools) -> None:
    given, _ = p.person()
    w.say("Does ").mark("NAME", given).say(f"'s {p.context()} change management? ").say(
        p.question()
    )


def shape_for_given_mrn(w: Writer, p: Pools) -> None:
    given, _ = p.person()
    label, number = p.record()
    w.say("For ").mark("NAME", given).say(f" ({label}").mark("MRN", number).say(
        f"), {p.context()}: {p.question()}"
    )


def shape_our_patient(w: Writer, p: Pools) -> None:
    given, _ = p.person()
    phrase, ident = p.age()
    w.say(f"{p.rng.choice(('Our patient', 'My patient', 'Our pt'))} ").mark("NAME", given).say(", ")
    w.say(phrase[: phrase.index(ident)]).mark("AGE_OVER_89", ident).say(
        phrase[phrase.index(ident) + len(ident) :]
    )
    w.say(f", has {p.context()}. {p.question()}")


def shape_surname_verb(w: Writer, p: Pools) -> None:
    _, surname = p.person()
    surname = surname[0].upper() + surname[1:]
    w.mark("NAME", surname).say(f" {p.rng.choice(CLINICAL_VERBS)} on ").mark("DATE", p.date())
    w.say(f" with {p.context()}. {p.question()}")


def shape_lower_title(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    title = p.rng.choice(("mr", "mrs", "ms", "dr"))
    name = lowercase(p.rng.choice((surname, f"{given} {surname}")))
    w.say(f"{title} ").mark("NAME", name).say(
        f" {p.rng.choice(CLINICAL_VERBS)} {p.context()}, {p.question().lower()}"
    )


def shape_full_dob(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    w.mark("NAME", f"{given} {surname}").say(", DOB ").mark("DATE", p.dob()).say(
        f", {p.context()}. {p.question()}"
    )


def shape_title_surname_phone(w: Writer, p: Pools) -> None:
    _, surname = p.person()
    w.say(f"{p.rng.choice(TITLES)} ").mark("NAME", surname).say(
        f" ({p.context()}) can be reached on "
    ).mark("PHONE", p.phone())
    w.say(f". {p.question()}")


def shape_email_address(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    w.say("Patient ").mark("NAME", f"{given} {surname}").say(", ").mark("ADDRESS", p.address()).say(
        ", e-mail "
    )
    w.mark("EMAIL", p.email(given, surname)).say(f": {p.context()}. {p.question()}")


def shape_national(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    label, number = p.national()
    w.mark("NAME", f"{surname}, {given}").say(f" — {label}").mark("NATIONAL_ID", number).say(
        f" — {p.context()}. {p.question()}"
    )


def shape_age_words(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    word = p.rng.choice(AGE_WORDS)
    w.say(f"{p.rng.choice(TITLES)} ").mark("NAME", f"{given} {surname}").say(", aged ").mark(
        "AGE_OVER_89", word
    )
    w.say(f", {p.context()}; seen on ").mark("DATE", p.date()).say(f". {p.question()}")


def shape_postcode(w: Writer, p: Pools) -> None:
    given, _ = p.person()
    w.say(f"Is {p.context()} an issue for ").mark("NAME", given).say(" who lives in ").mark(
        "POSTCODE", p.postcode()
    )
    w.say(f"? {p.question()}")


def shape_two_people(w: Writer, p: Pools) -> None:
    (g1, _s1), (g2, s2) = p.person(), p.person()
    w.say(f"{p.rng.choice(('Daughter', 'Son', 'Wife', 'Husband'))} ").mark(
        "NAME", f"{g2} {s2}"
    ).say(" (")
    w.mark("PHONE", p.phone()).say(") asks whether ").mark("NAME", g1).say(
        f" should continue with {p.context()}. {p.question()}"
    )


def shape_discharged_since(w: Writer, p: Pools) -> None:
    _, surname = p.person()
    label, number = p.record()
    w.say(f"{label}").mark("MRN", number).say(f"{')' if label.startswith('(') else ''}: ").mark(
        "NAME", surname[0].upper() + surname[1:]
    )
    w.say(" since ").mark("DATE", p.date()).say(f" on {p.context()}. {p.question()}")


def shape_lower_full(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    w.say("pt ").mark("NAME", lowercase(f"{given} {surname}")).say(", dob ").mark("DATE", p.dob())
    w.say(f", {p.context()} — {p.question().lower()}")


def shape_address_postcode(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    w.mark("NAME", f"{given} {surname}").say(" of ").mark("ADDRESS", p.address()).say(" (")
    w.mark("POSTCODE", p.postcode()).say(f") has {p.context()}. {p.question()}")


def shape_referred(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    (_dg, ds) = p.person()
    w.say("Referred by Dr ").mark("NAME", ds).say(": ").mark("NAME", given).say(" ").mark(
        "NAME", surname
    )
    w.say(f", {p.context()}, phone ").mark("PHONE", p.phone()).say(f". {p.question()}")


def shape_ids(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    label, number = p.national()
    record_label, record = p.record()
    w.say(f"Re {p.rng.choice(TITLES)} ").mark("NAME", surname).say(f" ({label}").mark(
        "NATIONAL_ID", number
    )
    w.say(f"; {record_label.strip('(')}").mark("MRN", record).say("; ").mark(
        "EMAIL", p.email(given, surname)
    )
    w.say(f"): {p.context()}. {p.question()}")


SHAPES = (
    shape_ids,
    shape_possessive,
    shape_for_given_mrn,
    shape_our_patient,
    shape_surname_verb,
    shape_lower_title,
    shape_full_dob,
    shape_title_surname_phone,
    shape_email_address,
    shape_national,
    shape_age_words,
    shape_postcode,
    shape_two_people,
    shape_discharged_since,
    shape_lower_full,
    shape_address_postcode,
    shape_referred,
)


# Forms added later, each in both halves with its own seeds, appended after the rows above (which
# stay exactly as first written): names in capitals, "SURNAME, Given" in any case, names after a
# newborn's label, names split by an invisible character, and texts in capitals that name no one.
INVISIBLE = ("\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
NEWBORN_CONTEXT = (
    "bilirubin 250 µmol/L on day 3",
    "born at 34 weeks, 2.1 kg",
    "Apgar 6 at 5 minutes",
    "on phototherapy",
    "GBS-positive mother, CRP 14 mg/L",
    "feeding poorly, glucose 2.1 mmol/L",
)
NEWBORN_LABELS = ("Baby girl", "Baby boy", "baby girl", "Baby Boy", "BABY GIRL", "Infant of")
# Verbs that read well before "with …" or "on <date>".
EVENTS = (
    "was admitted",
    "presented",
    "was discharged",
    "was readmitted",
    "was seen",
    "was reviewed",
)
# Capitals that are science: they stay, whoever the text is about.
CAPS_SCIENCE = {
    "dev": (
        "COPD",
        "HIV",
        "a TNF inhibitor",
        "BRCA1",
        "SARS-CoV-2",
        "ICD-10 E11.9",
        "NYHA III",
        "CKD stage 3",
        "a DOAC",
        "HER2-positive disease",
        "ARDS",
        "a WELLS score of 5",
    ),
    "frozen": (
        "COPD",
        "HIV",
        "TNF blockade",
        "a BRCA1 variant",
        "SARS-CoV-2 infection",
        "ICD-10 code E11.9",
        "STEMI",
        "MRSA bacteraemia",
        "an ICU stay",
        "AKI",
        "HFpEF",
        "a GRACE score of 140",
    ),
}
TRIALS = {
    "dev": ("HF-ACTION", "RECOVERY", "SPRINT", "ACCORD", "EMPA-REG OUTCOME", "UKPDS"),
    "frozen": ("HF-ACTION", "RECOVERY", "SPRINT", "ISCHEMIA", "PARADIGM-HF", "DECLARE-TIMI 58"),
}
GUARD_LISTS = {
    "dev": ("cells, mice", "cells, mice and humans", "rats, mice, and zebrafish"),
    "frozen": ("cells, mice", "mice, rats and pigs", "organoids, mice, and patients"),
}


def caps(name: str) -> str:
    return name.upper()


def hidden_in(name: str, rng: random.Random) -> str:
    """`name` with an invisible character inside one of its words (of three letters or more)."""
    words = list(re.finditer(r"\w{3,}", name))
    word = rng.choice(words)
    cut = rng.randint(word.start() + 1, word.end() - 1)
    return name[:cut] + rng.choice(INVISIBLE) + name[cut:]


def double_barrelled(p: Pools) -> str:
    (_, first), (_, second) = p.person(), p.person()
    clean = lambda s: s.split()[-1].split("-")[-1]
    return f"{clean(first)}-{clean(second)}"


def caps_pair_subject(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    w.mark("NAME", caps(f"{given} {surname}")).say(
        f" has {p.rng.choice(CAPS_SCIENCE[p.half])}. {p.question()}"
    )


def caps_title_surname(w: Writer, p: Pools) -> None:
    _, surname = p.person()
    title = p.rng.choice(("Mr", "Mrs", "MRS", "Dr", "MR", "Ms"))
    w.say(f"{title} ").mark("NAME", caps(surname)).say(
        f" {p.rng.choice(EVENTS)} with {p.rng.choice(CAPS_SCIENCE[p.half])}. {p.question()}"
    )


def caps_surname_verb(w: Writer, p: Pools) -> None:
    _, surname = p.person()
    w.mark("NAME", caps(surname)).say(f" {p.rng.choice(EVENTS)} on ").mark("DATE", p.date())
    w.say(f" with {p.rng.choice(CAPS_SCIENCE[p.half])}. {p.question()}")


def caps_patient_header(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    w.say(p.rng.choice(("PATIENT: ", "Patient: ", "Pt ", "NAME: "))).mark(
        "NAME", caps(f"{given} {surname}")
    ).say(", DOB ").mark("DATE", p.dob())
    w.say(f". {p.rng.choice(CAPS_SCIENCE[p.half])}; eligible for {p.rng.choice(TRIALS[p.half])}?")


def caps_given_alone(w: Writer, p: Pools) -> None:
    given, _ = p.person()
    label, number = p.record()
    w.say("For ").mark("NAME", caps(given)).say(f" ({label}").mark("MRN", number).say(
        f"{')' if label.startswith('(') else ''}), {p.rng.choice(CAPS_SCIENCE[p.half])}: {p.question()}"
    )


def caps_double_barrelled(w: Writer, p: Pools) -> None:
    given, _ = p.person()
    w.say(f"{p.rng.choice(('Our patient', 'Referral:', 'Re'))} ").mark(
        "NAME", caps(f"{given} {double_barrelled(p)}")
    ).say(
        f" — {p.rng.choice(CAPS_SCIENCE[p.half])}, as in {p.rng.choice(TRIALS[p.half])}. {p.question()}"
    )


def caps_note(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    science = p.rng.choice(CAPS_SCIENCE[p.half]).upper()
    w.mark("NAME", caps(f"{surname} {given}" if p.rng.random() < 0.3 else f"{given} {surname}"))
    w.say(f" — {science}. SEEN ON ").mark("DATE", p.date().upper()).say(f". {p.question().upper()}")


def inverted_discharge(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    surname, given = p.rng.choice(
        (
            (caps(surname), caps(given)),
            (caps(surname), given),
            (surname[0].upper() + surname[1:], given),
        )
    )
    w.say(p.rng.choice(("Discharge summary for ", "Clinic letter for ", "Referral for "))).mark(
        "NAME", f"{surname}, {given}"
    ).say(f": {p.rng.choice(CAPS_SCIENCE[p.half])}. {p.question()}")


def inverted_record(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    label, number = p.record()
    surname, given = p.rng.choice(
        (
            (caps(surname), caps(given)),
            (caps(surname), given),
            (surname[0].upper() + surname[1:], given),
        )
    )
    w.mark("NAME", f"{surname}, {given}").say(f" ({label.strip('(')}").mark("MRN", number).say(
        f") — {p.context()}. {p.question()}"
    )


def inverted_dob(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    surname, given = p.rng.choice(((caps(surname), caps(given)), (caps(surname), given)))
    w.say("Re: ").mark("NAME", f"{surname}, {given}").say(", DOB ").mark("DATE", p.dob()).say(
        f"; {p.rng.choice(CAPS_SCIENCE[p.half])} — {p.question()}"
    )


def inverted_subject(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    surname, given = p.rng.choice(((caps(surname), caps(given)), (caps(surname), given)))
    w.mark("NAME", f"{surname}, {given}").say(
        f" {p.rng.choice(('was admitted', 'was discharged', 'presented', 'was readmitted'))} on "
    ).mark("DATE", p.date()).say(f" with {p.rng.choice(CAPS_SCIENCE[p.half])}. {p.question()}")


def newborn_label(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    label = p.rng.choice(NEWBORN_LABELS)
    if label == "Infant of":
        name = f"{given} {surname}"
    else:
        name = p.rng.choice((given, surname[0].upper() + surname[1:]))
    if label.isupper():
        name = caps(name)
    w.say(f"{label} ").mark("NAME", name).say(f", {p.rng.choice(NEWBORN_CONTEXT)}. {p.question()}")


def newborn_record(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    label, number = p.record()
    w.say(f"{p.rng.choice(NEWBORN_LABELS[:5])} ").mark(
        "NAME", p.rng.choice((given, surname[0].upper() + surname[1:]))
    ).say(f" ({label.strip('(')}").mark("MRN", number).say(
        f"), {p.rng.choice(NEWBORN_CONTEXT)}: {p.question()}"
    )


def invisible_possessive(w: Writer, p: Pools) -> None:
    given, _ = p.person()
    w.say("Does ").mark("NAME", hidden_in(given, p.rng)).say(
        f"'s {p.context()} change management? {p.question()}"
    )


def invisible_full_dob(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    name = hidden_in(f"{given} {surname}", p.rng)
    w.mark("NAME", caps(name) if p.rng.random() < 0.3 else name).say(", DOB ").mark(
        "DATE", p.dob()
    ).say(f", {p.context()}. {p.question()}")


def invisible_title(w: Writer, p: Pools) -> None:
    _, surname = p.person()
    w.say(f"{p.rng.choice(TITLES)} ").mark("NAME", hidden_in(surname, p.rng)).say(
        f" ({p.context()}) can be reached on "
    ).mark("PHONE", p.phone())
    w.say(f". {p.question()}")


def invisible_patient(w: Writer, p: Pools) -> None:
    given, surname = p.person()
    w.say("Patient ").mark("NAME", hidden_in(f"{given} {surname}", p.rng)).say(
        f" {p.rng.choice(CLINICAL_VERBS)} {p.context()}. {p.question()}"
    )


def guard_research(w: Writer, p: Pools) -> None:
    s = CAPS_SCIENCE[p.half]
    first, second = p.rng.sample(s, 2)
    w.say(
        p.rng.choice(
            (
                f"In {p.rng.choice(TRIALS[p.half])}, did {first} change the effect of {second}? ",
                f"Is {first} with {second} covered by {p.rng.choice(TRIALS[p.half])}? ",
                f"Evidence from {p.rng.choice(GUARD_LISTS[p.half])} on {first} and {second}: ",
            )
        )
    ).say(p.question())


def guard_patient(w: Writer, p: Pools) -> None:
    s = CAPS_SCIENCE[p.half]
    first, second = p.rng.sample(s, 2)
    w.say(
        p.rng.choice(
            (
                f"My patient has {first} and {second}; would {p.rng.choice(TRIALS[p.half])} apply? ",
                f"Our patient with {first}, {second}. ",
                f"For a patient on {p.rng.choice(TRIALS[p.half])}-style therapy with {first}: ",
            )
        )
    ).say(p.question())


FORMS = {
    "caps": (
        caps_pair_subject,
        caps_title_surname,
        caps_surname_verb,
        caps_patient_header,
        caps_given_alone,
        caps_double_barrelled,
        caps_note,
    ),
    "inverted": (inverted_discharge, inverted_record, inverted_dob, inverted_subject),
    "newborn": (newborn_label, newborn_record),
    "invisible": (invisible_possessive, invisible_full_dob, invisible_title, invisible_patient),
    "guard": (guard_research, guard_patient),  # no identifiers: the text must come out unchanged
}
FORM_SIZES = {"caps": 21, "inverted": 16, "newborn": 12, "invisible": 12, "guard": 12}


def main() -> None:
    rows: list[dict[str, Any]] = []
    for half, seed, size in (("dev", 3601, 120), ("frozen", 3602, 120)):
        rng = random.Random(seed)
        pools = Pools(half, rng)
        for n in range(size):
            writer = Writer()
            SHAPES[(n + rng.randint(0, len(SHAPES) - 1)) % len(SHAPES)](writer, pools)
            rows.append(
                {
                    "id": f"{half}-{n:03d}",
                    "half": half,
                    "text": writer.text,
                    "identifiers": writer.identifiers,
                }
            )
    for half, seed in (("dev", 4501), ("frozen", 4502)):
        rng = random.Random(seed)
        pools = Pools(half, rng)
        for form, shapes in FORMS.items():
            for n in range(FORM_SIZES[form]):
                writer = Writer()
                shapes[n % len(shapes)](writer, pools)
                rows.append(
                    {
                        "id": f"{half}-{form}-{n:03d}",
                        "half": half,
                        "text": writer.text,
                        "identifiers": writer.identifiers,
                    }
                )
    for row in rows:
        for ident in row["identifiers"]:
            assert row["text"][ident["start"] : ident["end"]] == ident["text"], (row, ident)
    OUT.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    kinds: dict[str, int] = {}
    for row in rows:
        for ident in row["identifiers"]:
            kinds[ident["kind"]] = kinds.get(ident["kind"], 0) + 1
    print(f"{len(rows)} questions, {sum(kinds.values())} identifiers: {kinds}")


if __name__ == "__main__":
    main()
