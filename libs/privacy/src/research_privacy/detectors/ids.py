"""Numbers that identify a person: SSN and national numbers (NHS, CPR, PESEL, Aadhaar, …), medical
record, health-plan, account, licence, vehicle and device identifiers. Most look like any other
number without their label, so most patterns are keyed to one ("MRN: …", "licence no. …");
`INTERNATIONAL` has the record numbers after labels in several languages."""

from __future__ import annotations

import re

from research_privacy.detectors.base import (
    ACCOUNT,
    DEVICE,
    HEALTH_PLAN,
    LICENCE,
    MRN,
    SSN,
    VEHICLE,
    I,
    Recogniser,
    compiled,
    digit_count,
)

_ID = r"[A-Z0-9][A-Z0-9\-/]{3,}[0-9][A-Z0-9\-]*"


US: tuple[Recogniser, ...] = (
    Recogniser(SSN, compiled(r"\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b")),
    Recogniser(
        SSN,
        compiled(
            r"\b(?:SSN|social security(?: number| no\.?)?)\s*[:#]?\s*(\d{3}[- ]?\d{2}[- ]?\d{4})\b",
            I,
        ),
        1,
    ),
    Recogniser(
        MRN,
        compiled(
            r"\b(?:MRN|medical record(?: number| no\.?| #)?|record (?:number|no\.?|#)|chart (?:number|no\.?|#)|"
            r"patient (?:id|number|no\.?)|hospital (?:number|no\.?|id))(?![a-z])\s*[:#]?\s*("
            + _ID
            + r"|\d{4,})",
            I,
        ),
        1,
    ),
    Recogniser(MRN, compiled(r"\bMRN[\-:]?\d{4,}\b")),
    Recogniser(
        HEALTH_PLAN,
        compiled(
            r"\b(?:health plan|beneficiary|member|insurance|policy|medicare|medicaid)(?: id| number| no\.?| #)\b\.?\s*[:#]?\s*("
            + _ID
            + r"|\d{4,})",
            I,
        ),
        1,
    ),
    Recogniser(
        ACCOUNT,
        compiled(
            r"\b(?:account|acct|a/c|iban|card)\b(?: id| number| no\.?| #)?\s*[:#]\s*("
            + _ID
            + r"|\d{4,})",
            I,
        ),
        1,
    ),
    Recogniser(
        ACCOUNT,
        compiled(r"\b(?:account|acct)(?: number| no\.?| #)\s*(" + _ID + r"|\d{4,})", I),
        1,
    ),
    Recogniser(
        LICENCE,
        compiled(
            r"\b(?:licen[cs]e|certificate|cert\.?|DEA|NPI|passport|driver'?s licen[cs]e)\b(?: id| number| no\.?| #)?"
            r"\s*[:#]?\s*(" + _ID + r"|\d{5,})",
            I,
        ),
        1,
    ),
    Recogniser(
        VEHICLE,
        compiled(
            r"\b(?:VIN|licen[cs]e plate|plate(?: no\.?| number))\b\s*[:#]?\s*([A-Z0-9\-]{5,17})\b",
            I,
        ),
        1,
    ),
    Recogniser(
        VEHICLE,
        compiled(r"(?-i:\b[A-HJ-NPR-Z0-9]{17}\b)"),
        accept=lambda v: bool(re.search(r"\d", v)) and bool(re.search(r"[A-Z]", v)),
    ),
    Recogniser(
        DEVICE,
        compiled(
            r"\b(?:device|serial|s/n|sn|implant|pacemaker|imei|udi)\b(?: id| number| no\.?| #)?\s*[:#]\s*("
            + _ID
            + r"|\d{5,})",
            I,
        ),
        1,
    ),
    Recogniser(
        DEVICE,
        compiled(r"\b(?:serial|imei|udi)(?: id| number| no\.?| #)\s*(" + _ID + r"|\d{5,})", I),
        1,
    ),
    # National numbers after their label: NHS, CHI, CPR, SSN, Medicare / Medicaid (MBI), BSN, AHV,
    # PESEL, personnummer, Aadhaar, SIN, IHI — spaced, dotted or hyphenated groups.
    Recogniser(
        SSN,
        compiled(
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
)


INTERNATIONAL: tuple[Recogniser, ...] = (
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
            I,
        ),
        1,
        accept=lambda v: digit_count(v) >= 3,
    ),
    Recogniser(
        MRN,
        re.compile(
            r"(?<![\w\-/])(?=[A-Z0-9\-/]*\d{3})[A-Z]{1,4}[\-/]?\d[\dA-Z]*(?:[\-/]\d[\dA-Z]*){1,3}(?:-[A-Z]{1,3})?(?![\w\-/])"
        ),
        accept=lambda v: digit_count(v) >= 5,
    ),
)
