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


def main() -> None:
    rows = []
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
