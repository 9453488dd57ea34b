"""The replicator's verdict on fresh evidence comes from the stance model (issue 29 item 5): a fresh
source that contradicts the claim erodes it even when the old quotes still stand, a fresh source
that supports it confirms it even when the old quotes are gone, and only when no fresh source
takes a stance do the old quotes decide. A fixed-probability judge: the rule is tested, not the weights."""

from __future__ import annotations

import uuid

import pytest

from research_contracts import EvidenceRefreshed, SourceHit, Support
from research_replicator.experiment import CONFIRMED, ERODED, compare
from research_replicator.prepare import DueClaim
from tests.verification.fixed_judge import FixedJudge

pytestmark = pytest.mark.unit

STATEMENT = "Vitamin D lowers the risk of falls in older adults."
OLD = "Vitamin D lowered the risk of falls in older adults."
FOR = "In a new trial, vitamin D reduced falls by a fifth."
AGAINST = "In a larger trial, vitamin D did not reduce falls."


def claim() -> DueClaim:
    return DueClaim(
        uuid.uuid4(),
        "Does vitamin D lower the risk of falls?",
        "vitamin D",
        STATEMENT,
        (Support(source_id="pmid:1", title="t", quote=OLD),),
    )


def fresh(*hits: tuple[str, str]) -> EvidenceRefreshed:
    return EvidenceRefreshed(
        hits=[SourceHit(source_id=s, source="pubmed", title="a trial", abstract=a) for s, a in hits]
    )


JUDGE = FixedJudge({OLD: (0.8, 0.1, 0.1), FOR: (0.8, 0.1, 0.1), AGAINST: (0.1, 0.85, 0.05)})


def test_fresh_contradicting_evidence_erodes_a_claim_whose_quote_still_stands():
    result = compare(
        claim(),
        fresh(("pmid:1", "A different text."), ("pmid:2", AGAINST)),
        set(),
        0.5,
        judge=JUDGE,
    )
    assert result.verdict == ERODED and result.details["contradicting"] == ["pmid:2"]
    assert result.details["basis"] == "fresh evidence contradicts the claim"


def test_fresh_supporting_evidence_confirms_a_claim_whose_quote_is_gone():
    result = compare(
        claim(), fresh(("pmid:1", "A different text."), ("pmid:3", FOR)), set(), 0.5, judge=JUDGE
    )
    assert (
        result.verdict == CONFIRMED
        and result.details["share_kept"] == 0.0
        and result.details["supporting"] == ["pmid:3"]
    )


def test_without_a_fresh_stance_the_old_quotes_decide():
    assert (
        compare(claim(), fresh(("pmid:1", OLD.upper())), set(), 0.5, judge=FixedJudge()).verdict
        == CONFIRMED
    )
    gone = compare(claim(), fresh(("pmid:1", "A different text.")), set(), 0.5, judge=FixedJudge())
    assert (
        gone.verdict == ERODED
        and gone.details["basis"] == "no fresh stance; the old quotes are gone"
    )


def test_the_claims_statement_is_judged_and_its_own_sources_first():
    judge = FixedJudge(JUDGE.stances)
    compare(
        claim(), fresh(("pmid:9", FOR), ("pmid:1", OLD)), set(), 0.5, judged_sources=1, judge=judge
    )
    assert judge.calls == [("stance", STATEMENT, [OLD])], "one source judged: the claim's own"
