"""The review loop: author drafts → conform → citation check → peer review; REVISION_NEEDED
sends the draft and the issues back to the author, at most `max_iterations` rounds (≤ 2).

No database, no broker: the agents reach the corpus only through their recorded `Toolbox`, and
every agent call is an `agent_start` … `agent_end` scope of the run, every step a tool call.
A report whose citation check finds an unknown `[N]` never passes: the peer reviewer raises it
as CRITICAL (check 2), and the loop refuses PASS on a blocking check regardless of the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from research_contracts.corpus_tools import PaperRecord
from research_reports import CitationCheck, Report, check_report
from research_reviewer.critique import PeerReview, Severity
from research_reviewer.prepare import ReviewJob
from research_reviewer.reshape import Conformed, conform
from research_reviewer.tools import Toolbox, ToolPort
from research_runs import RunRecorder


class Author(Protocol):
    model: str

    async def draft(self, job: ReviewJob, tools: Toolbox) -> Report: ...

    async def revise(self, report: Report, review: PeerReview, tools: Toolbox) -> Report: ...

    def known_papers(self) -> dict[str, PaperRecord]: ...


class Reviewer(Protocol):
    model: str

    async def review(
        self, report: Report, check: CitationCheck, topic: str, tools: Toolbox, iteration: int
    ) -> PeerReview: ...


@dataclass
class Round:
    iteration: int
    review: PeerReview
    check: CitationCheck
    dropped: dict[str, int]

    def info(self) -> dict[str, Any]:
        return {
            "iteration": self.iteration,
            "verdict": self.review.verdict,
            **self.review.counts(),
            "citation_accuracy": self.check.citation_accuracy,
            "grounding": self.check.grounding,
            "unknown_ids": self.check.unknown_ids,
            **self.dropped,
        }


@dataclass
class LoopOutcome:
    report: Report
    review: PeerReview
    check: CitationCheck
    rounds: list[Round] = field(default_factory=list)
    tool_calls: int = 0

    @property
    def verdict(self) -> str:
        return self.review.verdict

    def dropped(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for r in self.rounds:
            for key, value in r.dropped.items():
                totals[key] = totals.get(key, 0) + value
        return totals


async def review_loop(
    job: ReviewJob, author: Author, reviewer: Reviewer, port: ToolPort, recorder: RunRecorder
) -> LoopOutcome:
    """Run up to `job.max_iterations` author/reviewer rounds and return the last report and review."""
    rounds: list[Round] = []
    report: Report | None = None
    review: PeerReview | None = None
    calls = 0
    for iteration in range(1, job.max_iterations + 1):
        async with recorder.agent(
            "researcher", iteration=iteration, agent_id="research_literature_review_agent"
        ) as view:
            tools = Toolbox(port, view)
            if report is None or review is None:
                await view.reasoning(f"Drafting a review of: {job.topic}")
                report = await author.draft(job, tools)
            else:
                await view.reasoning(
                    f"Revising the draft for {len(review.issues)} issue(s) of round {iteration - 1}"
                )
                report = await author.revise(report, review, tools)
            conformed: Conformed = conform(report, author.known_papers())
            report = conformed.report
            report.metadata.update({"iteration": iteration, "model": author.model})
            calls += tools.calls
            await view.message_chunk(report.render_markdown())
        check = check_report(report)
        async with recorder.agent(
            "peer_reviewer", iteration=iteration, agent_id="peer_review_agent"
        ) as view:
            tools = Toolbox(port, view)
            review = await reviewer.review(report, check, job.topic, tools, iteration)
            if check.blocking and not any(
                i.check == 2 and i.reference_id in check.unknown_ids for i in review.issues
            ):
                review.flag(
                    Severity.critical,
                    2,
                    "References",
                    "unknown citation ids: " + ", ".join(map(str, check.unknown_ids)),
                )
            calls += tools.calls
            await view.message_chunk(review.render())
        await recorder.verdict(
            review.verdict,
            iteration=iteration,
            details={
                **review.counts(),
                "citation_check": check.model_dump(include={"unknown", "unsupported", "uncited"}),
                "missed_papers": len(review.missed_papers),
            },
        )
        rounds.append(Round(iteration, review, check, conformed.counts()))
        if review.verdict == "PASS":
            break
    assert report is not None and review is not None
    return LoopOutcome(
        report=report, review=review, check=rounds[-1].check, rounds=rounds, tool_calls=calls
    )
