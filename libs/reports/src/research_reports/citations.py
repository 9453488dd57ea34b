"""The citation checker (seed 003), applied to every report of every mode.

Three failure kinds, each an entry of `CitationCheck.issues`:

- `unknown_id` — a `[N]` marker (or a quote) names no reference. **Blocking**: a report with
  one never reaches PASS.
- `unsupported` — the cited source does not support the sentence: too few of the sentence's
  content words occur in the source text (`low_overlap`), a number of the sentence is in none
  of its cited sources (`number_not_in_source`), a quote is not found verbatim
  (`quote_not_verbatim`), or the source's text is unknown (`no_source_text`).
- `uncited` — a factual sentence (numbers, years, named entities) without any marker.

Input is either a structured `Report` (`check_report`) or the Markdown an LLM wrote
(`check_markdown`); both walk the same prose/quote checks so they agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from enum import StrEnum

from pydantic import BaseModel, Field, computed_field

from research_reports import text as lexical
from research_reports.model import Reference, Report

DEFAULT_MIN_OVERLAP = 0.3
_REFERENCE_HEADINGS = re.compile(
    r"^(\d+[.)]\s*)?(references|bibliography|sources)\s*$", re.IGNORECASE
)


class IssueKind(StrEnum):
    unknown_id = "unknown_id"
    unsupported = "unsupported"
    uncited = "uncited"


class CitationIssue(BaseModel):
    """One problem, located well enough for an author to fix it."""

    kind: IssueKind
    reason: str = Field(
        description="unknown_id | low_overlap | number_not_in_source | quote_not_verbatim | no_source_text | uncited_fact"
    )
    sentence: str = Field(description="The sentence or quote concerned.")
    section: str | None = None
    reference_id: int | None = None
    finding_id: str | None = None
    overlap: float | None = Field(
        default=None, description="Share of the sentence's content words found in the source."
    )
    detail: str = ""


class CitationCheck(BaseModel):
    """Counts and issues of one check; JSON-serialisable as stored with the report."""

    sentences: int = 0
    factual_sentences: int = 0
    grounded_sentences: int = Field(
        default=0, description="Factual sentences carrying a citation that checks out."
    )
    citations: int = Field(default=0, description="(sentence, reference) pairs checked.")
    supported_citations: int = 0
    quotes: int = 0
    verbatim_quotes: int = 0
    unknown_ids: list[int] = Field(default_factory=list)
    issues: list[CitationIssue] = Field(default_factory=list)

    def _count(self, kind: IssueKind) -> int:
        return sum(1 for issue in self.issues if issue.kind == kind)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's decorator over a property
    @property
    def unknown(self) -> int:
        return self._count(IssueKind.unknown_id)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's decorator over a property
    @property
    def unsupported(self) -> int:
        return self._count(IssueKind.unsupported)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's decorator over a property
    @property
    def uncited(self) -> int:
        return self._count(IssueKind.uncited)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's decorator over a property
    @property
    def blocking(self) -> bool:
        """True when a marker names no reference: such a report must not PASS."""
        return bool(self.unknown_ids)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's decorator over a property
    @property
    def all_valid(self) -> bool:
        return not self.issues

    @computed_field  # type: ignore[prop-decorator]  # pydantic's decorator over a property
    @property
    def citation_accuracy(self) -> float:
        """Citations and quotes that check out, over all of them (1.0 when there are none)."""
        total = self.citations + self.quotes
        return (
            1.0
            if total == 0
            else round((self.supported_citations + self.verbatim_quotes) / total, 4)
        )

    @computed_field  # type: ignore[prop-decorator]  # pydantic's decorator over a property
    @property
    def grounding(self) -> float:
        """Factual sentences backed by a valid citation, over all factual sentences."""
        return (
            1.0
            if self.factual_sentences == 0
            else round(self.grounded_sentences / self.factual_sentences, 4)
        )


class _Checker:
    """Accumulates one CitationCheck; `prose` and `quote` are the two checks every input uses."""

    def __init__(self, sources: Mapping[int, Reference], min_overlap: float) -> None:
        self.sources = sources
        self.min_overlap = min_overlap
        self.result = CitationCheck()

    def _unknown(
        self, ref_id: int, sentence: str, section: str | None, finding_id: str | None
    ) -> None:
        if ref_id not in self.result.unknown_ids:
            self.result.unknown_ids.append(ref_id)
        self.result.issues.append(
            CitationIssue(
                kind=IssueKind.unknown_id,
                reason="unknown_id",
                sentence=sentence,
                section=section,
                reference_id=ref_id,
                finding_id=finding_id,
                detail=f"[{ref_id}] is not in References",
            )
        )

    def prose(
        self,
        block: str,
        *,
        section: str | None,
        requires_citations: bool = True,
        finding_id: str | None = None,
    ) -> None:
        for sentence in lexical.split_sentences(block):
            self.sentence(
                sentence,
                section=section,
                requires_citations=requires_citations,
                finding_id=finding_id,
            )

    def sentence(
        self,
        sentence: str,
        *,
        section: str | None,
        requires_citations: bool,
        finding_id: str | None,
    ) -> None:
        plain = lexical.without_markers(sentence)
        if not lexical.WORD.search(plain):
            return
        result = self.result
        result.sentences += 1
        ids = lexical.cited_ids(sentence)
        signals = lexical.factual_signals(sentence)
        known = [i for i in ids if i in self.sources]
        for ref_id in ids:
            if ref_id not in self.sources:
                self._unknown(ref_id, sentence, section, finding_id)
        supported_any = False
        words = lexical.content_tokens(plain)
        years = {str(self.sources[i].year) for i in known if self.sources[i].year}
        cited_numbers = {n for n in lexical.numbers(plain) if n not in years}
        numbers_found: set[str] = set()
        for ref_id in known:
            result.citations += 1
            source = self.sources[ref_id]
            if not source.source_text.strip():
                self._unsupported(
                    "no_source_text",
                    sentence,
                    section,
                    ref_id,
                    finding_id,
                    None,
                    "the cited source's text is not available",
                )
                continue
            source_words = lexical.content_tokens(source.source_text)
            overlap = len(words & source_words) / len(words) if words else 1.0
            numbers_found |= {n for n in cited_numbers if _number_in(n, source.source_text)}
            if len(words) >= 2 and overlap < self.min_overlap:
                self._unsupported(
                    "low_overlap",
                    sentence,
                    section,
                    ref_id,
                    finding_id,
                    round(overlap, 3),
                    f"{len(words & source_words)} of {len(words)} content words occur in [{ref_id}]",
                )
                continue
            result.supported_citations += 1
            supported_any = True
        missing = sorted(cited_numbers - numbers_found)
        if known and missing and supported_any:
            # A number the sentence states must come from one of the sources it cites.
            self._unsupported(
                "number_not_in_source",
                sentence,
                section,
                known[0],
                finding_id,
                None,
                "not in any cited source: " + ", ".join(missing),
            )
            result.supported_citations -= 1
            supported_any = False
        for quoted in lexical.QUOTED.findall(lexical.normalise(sentence)):
            for ref_id in known:
                self.quote(
                    quoted, ref_id, section=section, finding_id=finding_id, count_unknown=False
                )
                break
        if signals and requires_citations:  # computed sections state facts nobody can cite
            result.factual_sentences += 1
            if not ids:
                result.issues.append(
                    CitationIssue(
                        kind=IssueKind.uncited,
                        reason="uncited_fact",
                        sentence=sentence,
                        section=section,
                        finding_id=finding_id,
                        detail="; ".join(signals[:5]),
                    )
                )
            elif supported_any and len(known) == len(ids):
                result.grounded_sentences += 1

    def _unsupported(
        self,
        reason: str,
        sentence: str,
        section: str | None,
        ref_id: int,
        finding_id: str | None,
        overlap: float | None,
        detail: str,
    ) -> None:
        self.result.issues.append(
            CitationIssue(
                kind=IssueKind.unsupported,
                reason=reason,
                sentence=sentence,
                section=section,
                reference_id=ref_id,
                finding_id=finding_id,
                overlap=overlap,
                detail=detail,
            )
        )

    def quote(
        self,
        quote: str,
        ref_id: int,
        *,
        section: str | None,
        finding_id: str | None = None,
        count_unknown: bool = True,
    ) -> None:
        self.result.quotes += 1
        source = self.sources.get(ref_id)
        if source is None:
            if count_unknown:
                self._unknown(ref_id, quote, section, finding_id)
            return
        if lexical.found_verbatim(quote, source.source_text):
            self.result.verbatim_quotes += 1
        else:
            self._unsupported(
                "quote_not_verbatim",
                quote,
                section,
                ref_id,
                finding_id,
                None,
                f"quote not found in [{ref_id}]",
            )


def _number_in(number: str, source_text: str) -> bool:
    bare = number.rstrip("%")
    return (
        re.search(rf"(?<![\d.]){re.escape(bare)}(?![\d]|\.\d)", source_text.replace(",", ""))
        is not None
    )


def _index(references: Iterable[Reference] | Mapping[int, Reference]) -> dict[int, Reference]:
    if isinstance(references, Mapping):
        return dict(references)
    return {r.id: r for r in references}


def check_report(report: Report, *, min_overlap: float = DEFAULT_MIN_OVERLAP) -> CitationCheck:
    """Check a structured report against its own references' `source_text`."""
    checker = _Checker(_index(report.references), min_overlap)
    for section in report.sections:
        checker.prose(
            section.body, section=section.title, requires_citations=section.requires_citations
        )
        for finding in section.findings:
            statement = finding.statement
            extra = [n for n in finding.cited_ids() if n not in lexical.cited_ids(statement)]
            statement = statement + "".join(f" [{n}]" for n in extra)
            checker.sentence(
                statement,
                section=section.title,
                requires_citations=section.requires_citations,
                finding_id=finding.key(),
            )
            for quote in finding.quotes:
                checker.quote(
                    quote.text, quote.reference_id, section=section.title, finding_id=finding.key()
                )
    return checker.result


def check_markdown(
    markdown: str,
    references: Iterable[Reference] | Mapping[int, Reference],
    *,
    exempt_sections: Iterable[str] = (),
    min_overlap: float = DEFAULT_MIN_OVERLAP,
) -> CitationCheck:
    """Check free Markdown (an LLM's draft) against `references`. Everything after a References
    heading is ignored; `> "quote" [N]` lines are checked verbatim; sections named in
    `exempt_sections` (computed statistics) are not asked for markers."""
    checker = _Checker(_index(references), min_overlap)
    exempt = {re.sub(r"^\d+[.)]\s*", "", s).strip().lower() for s in exempt_sections}
    section: str | None = None
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            title = (section or "").lower()
            checker.prose(
                " ".join(paragraph), section=section, requires_citations=title not in exempt
            )
            paragraph.clear()

    for raw in markdown.splitlines():
        line = raw.strip()
        heading = re.match(r"^#{1,6}\s+(.*)$", line)
        if heading:
            flush()
            section = re.sub(r"^\d+[.)]\s*", "", heading.group(1)).strip()
            if _REFERENCE_HEADINGS.match(section):
                break
            continue
        quote = re.match(
            r'^(?:[-*+]\s+)?>\s*["\u201c](.+?)["\u201d]\s*((?:\[\d+(?:\s*,\s*\d+)*\]\s*)+)', line
        )
        if quote:
            flush()
            for ref_id in lexical.cited_ids(quote.group(2)):
                checker.quote(quote.group(1), ref_id, section=section)
            continue
        if not line:
            flush()
        elif re.match(r"^(?:[-*+]|\d+[.)])\s+", line):
            flush()
            paragraph.append(lexical.strip_markup(line))
            flush()
        else:
            paragraph.append(lexical.strip_markup(line))
    flush()
    return checker.result
