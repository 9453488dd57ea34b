"""A structured abstract's sections: which sentences frame a study and which report what it found.

    section(sentence) -> "RESULTS" | None              the section label a sentence opens with
    frames(label) / reports(label) -> bool             a framing section ("METHODS") / one of findings ("METHODS AND RESULTS")
    reported(sentences) -> [sentence]                  the sentences outside the framing sections
    reviews_others(sentences) -> bool                  a review or commentary ("Here, we discuss …"): no findings of its own

Background, aims, design and methods sections say what a study asked and how it was run, never
what it found: "CONTEXT Findings from previous studies … have been inconsistent." is not evidence
against exercise training, however the stance model reads it. An unstructured abstract has no
labels, so every sentence is kept. The verifier, the scout and the reviewer read sections here.
"""

from __future__ import annotations

import re

# A section label opening a sentence ("RESULTS", "DESIGN, SETTING, AND PATIENTS", "METHODS:").
SECTION = re.compile(r"^([A-Z]{3,}(?:[ ,&/]+(?:AND\s+)?[A-Z]{3,})*)\s*:?\s+(?=[A-Z0-9(])")
# Sections that frame a study (what it asked, how it was done) rather than report what it found.
FRAMING = re.compile(
    r"\b(BACKGROUND|CONTEXT|INTRODUCTION|IMPORTANCE|RATIONALE|OBJECTIVES?|AIMS?|PURPOSE|METHODS?|"
    r"DESIGN|SETTINGS?|PARTICIPANTS|PATIENTS|SUBJECTS|INTERVENTIONS?|MEASURES|MEASUREMENTS)\b"
)
# Sections that report what a study found.
FINDING = re.compile(r"\b(RESULTS?|FINDINGS|CONCLUSIONS?|INTERPRETATION)\b")


def section(sentence: str) -> str | None:
    """The section label `sentence` opens with, upper case, or None."""
    found = SECTION.match(sentence)
    return found.group(1).upper() if found else None


def reports(label: str | None) -> bool:
    """Whether a section labelled `label` reports findings ("RESULTS", "METHODS AND RESULTS")."""
    return bool(label and FINDING.search(label))


def frames(label: str | None) -> bool:
    """Whether a section labelled `label` frames the study; "METHODS AND RESULTS" reports findings."""
    return bool(label and FRAMING.search(label)) and not reports(label)


def reported(sentences: list[str]) -> list[str]:
    """`sentences` (in order) without those of a structured abstract's framing sections."""
    kept: list[str] = []
    current: str | None = None
    for sentence in sentences:
        current = section(sentence) or current
        if not frames(current):
            kept.append(sentence)
    return kept


# A paper that says it reviews or discusses others' work ("Here, we critically evaluate the evidence …",
# "This review summarises …"). Its sentences are background, however much they read like findings:
# 3 of SciFact train's 365 gold evidence abstracts say so, 234 of the corpus's 5,183.
REVIEWS_OTHERS = re.compile(
    r"\b(?:here,? )?(?:we|this (?:review|article|commentary|perspective|essay))(?: critically)? (?:review|reviews|discuss|"
    r"discusses|evaluate the evidence|critically evaluate|summari[sz]e|summari[sz]es|highlight|outline|consider)\b",
    re.IGNORECASE,
)


def reviews_others(sentences: list[str]) -> bool:
    """Whether an abstract presents a review or commentary of others' work rather than a study's findings."""
    return any(REVIEWS_OTHERS.search(s) for s in sentences)
