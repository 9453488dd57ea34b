"""The conditions an evidence sentence states and the claim does not: who, how much, where.

"Aspirin reduced ischaemic stroke among women aged over 65" supports "Aspirin reduces stroke
risk" only for a population the claim does not name; "in mice", "at 300 mg/day", "only in
patients who adhered" likewise. Such a finding QUALIFIES the claim: it holds under a condition
the evidence states. A condition the claim already names ("in patients with chronic heart
failure" for a claim about them) restricts nothing, so it is left out.

    stated_conditions(sentence, claim) -> [Condition(kind, phrase)]

Kinds: `restriction` (only in …, except …, unless …, but not …, in a subgroup …, depends on …),
`population` (in / among women, children, older adults, mice, patients with …), `dose`
(an amount with a unit, high / low doses) and `setting` (in vitro, in cell lines, animal models,
primary care, …). Pure and deterministic; it reads what a sentence says, it judges nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from research_text import word_list

STOPWORDS = word_list("stopwords.lexical")  # the words claim parsing skips

_PHRASE_END = r"[^,.;:()]{0,60}?(?=[,.;:()]|\s+(?:and|but|whereas|while|compared|than|with|who|which|that)\b|$)"
_GROUPS = (
    r"(?:older |elderly |young |younger |adult |pediatric |paediatric |postmenopausal |premenopausal |pregnant |obese |"
    r"overweight |healthy |diabetic |hypertensive |critically ill |male |female |black |white |asian )*"
    r"(?:women|men|girls|boys|children|adolescents|infants|neonates|newborns|elderly|older adults|adults|"
    r"mice|rats|dogs|pigs|primates|animals|smokers|non-smokers|nonsmokers|athletes|volunteers|"
    r"(?:patients|subjects|individuals|participants|people|persons) (?:with|without|aged|older|younger|over|under|who)"
    + _PHRASE_END
    + r")"
    r"(?:\s+(?:aged|over|under|older than|younger than|with|without)\b" + _PHRASE_END + r")?"
)
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "restriction",
        re.compile(
            r"(?<!not )\bonly (?:in|among|when|if|for|at|after|with|during|under)\b"
            + _PHRASE_END
            + "|"
            r"\bexcept (?:in|for|among|when)?" + _PHRASE_END + "|"
            r"\bunless\b" + _PHRASE_END + "|"
            r"\bbut not (?:in|among|for)\b" + _PHRASE_END + "|"
            r"\b(?:restricted|limited|confined) to\b" + _PHRASE_END + "|"
            r"\bin (?:a |the |one )?subgroups?\b" + _PHRASE_END + "|"
            r"\bdepend(?:s|ed|ing)? on\b" + _PHRASE_END,
            re.IGNORECASE,
        ),
    ),
    ("population", re.compile(r"\b(?:in|among|for|of) (?:the )?" + _GROUPS, re.IGNORECASE)),
    (
        "dose",
        re.compile(
            r"\b(?:at |with |of |above |below |over |under |up to )?\d+(?:\.\d+)?\s?(?:mg|g|µg|ug|mcg|iu|mmol|ml|units?)"
            r"(?:\s?(?:/|per )\s?(?:kg|day|d|week|dose|m2))*\b|"
            r"\b(?:at |with )?(?:high|higher|low|lower|moderate|the highest|the lowest) doses?\b"
            + _PHRASE_END,
            re.IGNORECASE,
        ),
    ),
    (
        "setting",
        re.compile(
            r"\bin vitro\b|\bin vivo\b|\bex vivo\b|\bin (?:cultured |human |primary )?(?:cell lines?|cells|cultures?)\b|"
            r"\bin (?:a |the )?(?:mouse|murine|rat|animal|zebrafish|primate) models?\b|"
            r"\bin (?:primary care|general practice|intensive care|the community|nursing homes?|hospitali[sz]ed patients|"
            r"outpatients|inpatients|low-income countries|high-income countries|developing countries)\b",
            re.IGNORECASE,
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class Condition:
    kind: str  # restriction | population | dose | setting
    phrase: str  # as the sentence states it

    def __str__(self) -> str:
        return f"{self.phrase} ({self.kind})"


def _words(text: str) -> set[str]:
    """Content words, lower-cased, a plural 's' dropped ("women" stays: it is its own word)."""
    out = set()
    for word in re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", text.lower()):
        if word in STOPWORDS or len(word) < 2:
            continue
        out.add(
            word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
        )
    return out


def stated_conditions(sentence: str, claim: str) -> list[Condition]:
    """The conditions `sentence` states that `claim` does not already name, in order of appearance."""
    claimed = _words(claim)
    found: list[tuple[int, Condition]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in PATTERNS:
        for match in pattern.finditer(sentence):
            start, end = match.span()
            if any(start < b and a < end for a, b in taken):
                continue  # inside a condition already found ("only in women" is not also a population)
            phrase = " ".join(match.group(0).split()).strip(" ,")
            new = _words(phrase) - claimed
            if kind != "restriction" and not new:
                continue  # the claim names it: no restriction
            taken.append((start, end))
            found.append((start, Condition(kind, phrase)))
    return [c for _, c in sorted(found, key=lambda t: t[0])]


_NULL_RESULT = re.compile(
    r"\b(?:not|no|non-?)\s?(?:statistically\s)?significant(?:ly)?\b|\bnonsignificant\b|"
    r"\bdid not (?:reach|achieve) (?:statistical )?significance\b|\btrends? towards?\b|"
    r"\b(?:did|does|do) not (?:differ|change|improve|increase|decrease|reduce|affect)\w* (?:\w+ ){0,3}significantly\b|"
    r"\bp\s?(?:>|≥|>=)\s?0?\.0?5\b|\bp\s?=\s?0?\.(?:0[5-9]|[1-9])\d*",
    re.IGNORECASE,
)
_SIGNIFICANT = re.compile(
    r"\bp\s?(?:<|≤|<=)\s?0?\.0\d*|"
    r"(?<!not )(?<!no )\b(?:statistically )?significant(?:ly)? (?:improv|increas|reduc|decreas|higher|lower|greater|"
    r"better|enhanc|more|less|associat|benefi|effect)\w*",
    re.IGNORECASE,
)
_NULL_CLAIM = re.compile(
    r"\b(?:no|not|never|neither|nor|fails?|cannot|without|unrelated|independent)\b|n't\b",
    re.IGNORECASE,
)


def null_result(sentence: str, claim: str) -> bool:
    """Whether `sentence` reports an effect that was not statistically significant ("a trend
        toward …; P = 0.10", "no significant difference") while `claim` asserts one: such a sentence
        does not support the claim, however favourable its direction. A claim that itself states a
        null ("X does not affect Y") is supported by exactly such a sentence, so it never counts; nor
    does a sentence that also reports a significant result."""
    if _NULL_CLAIM.search(claim) or not _NULL_RESULT.search(sentence):
        return False
    return not _SIGNIFICANT.search(
        sentence
    )  # "A improved (P < .001); B did not (P = 0.30)" still reports an effect
