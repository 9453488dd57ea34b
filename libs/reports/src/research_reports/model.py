"""The structured report shared by the three modes (literature review, claim verification,
source list): sections of prose and findings, findings carrying a tag and the exact quotes
they rest on, and a numbered reference list that the `[N]` markers in the prose resolve to.

A report is data first (stored as JSON with its versions, checked by the citation checker,
diffed between versions) and rendered second (`render_markdown`, the PDF export). Keeping the
quotes and the cited source text on the model is what lets the checker verify a report without
calling back into the corpus.
"""

from __future__ import annotations

import hashlib
import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


def web_url(url: str | None) -> str | None:
    """`url` when a reader or a reference manager can open it (http or https); None for a
    source's own id (`corpus:12`) or any other scheme, which the references and exports leave
    out (the paper id is printed on its own)."""
    text = (url or "").strip()
    return text if re.match(r"(?i)https?://\S+$", text) else None


class FindingTag(StrEnum):
    """Seed 000's evidence tags for key findings (other modes may use their own tag strings)."""

    supported = "SUPPORTED"
    contested = "CONTESTED"
    insufficient = "INSUFFICIENT"


class Reference(BaseModel):
    """One numbered entry of the References section; `[id]` in the prose points here."""

    model_config = ConfigDict(extra="forbid")

    id: int = Field(
        ge=1, description="The marker number: `[3]` resolves to the reference with id 3."
    )
    title: str = Field(min_length=1)
    authors: list[str] = Field(
        default_factory=list, description="All authors, in order, as written by the source."
    )
    year: int | None = Field(default=None, ge=1000, le=2999)
    venue: str | None = Field(default=None, description="Journal, conference or publisher.")
    doi: str | None = None
    url: str | None = None
    paper_id: str | None = Field(
        default=None, description="Source-prefixed id (`corpus:12`, `pmid:…`, `doi:…`)."
    )
    source_text: str = Field(
        default="",
        description="The text of the source the author read (abstract and retrieved passages); "
        "the citation checker tests support and quotes against it. Not rendered.",
    )

    def key(self) -> str:
        """Identity across report versions: DOI, else paper id, else the normalised title."""
        if self.doi:
            return "doi:" + self.doi.lower().removeprefix("https://doi.org/")
        if self.paper_id:
            return self.paper_id
        return "title:" + re.sub(r"\W+", " ", self.title.lower()).strip()

    def render(self) -> str:
        """One References line: authors (year). title. venue. doi / url. paper id."""
        parts = []
        if self.authors:
            parts.append("; ".join(self.authors) + (f" ({self.year})." if self.year else "."))
        elif self.year:
            parts.append(f"({self.year}).")
        parts.append(self.title.rstrip(".") + ".")
        if self.venue:
            parts.append(f"*{self.venue}*.")
        if self.doi:
            parts.append(f"doi:{self.doi}.")
        elif url := web_url(self.url):  # a source's own id (`corpus:12`) is no link
            parts.append(f"<{url}>.")
        if self.paper_id:
            parts.append(f"paper id: `{self.paper_id}`")
        return f"[{self.id}] " + " ".join(parts)


class Quote(BaseModel):
    """An exact sentence (or span) of a cited source that a finding rests on."""

    model_config = ConfigDict(extra="forbid")

    reference_id: int = Field(ge=1, description="The reference the quote is taken from.")
    text: str = Field(min_length=1, description="Verbatim text of the source.")
    locator: str | None = Field(
        default=None, description="Where in the source (chunk id, section, sentence index)."
    )


class Finding(BaseModel):
    """One tagged, cited statement (a key finding, a piece of evidence, a fact of a source)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(
        default="", description="Stable key across versions; derived from the statement when empty."
    )
    statement: str = Field(
        min_length=1, description="The finding; may carry `[N]` markers, added when missing."
    )
    tag: str | None = Field(
        default=None, description="SUPPORTED / CONTESTED / INSUFFICIENT, or a mode's own tag."
    )
    citations: list[int] = Field(
        default_factory=list, description="Reference ids the finding cites."
    )
    quotes: list[Quote] = Field(default_factory=list)
    group: str | None = Field(default=None, description="Sub-topic cluster the finding belongs to.")
    claim_id: str | None = Field(
        default=None, description="The ledger claim proposed for this finding."
    )

    def key(self) -> str:
        """`id`, or a hash of the normalised statement without its markers."""
        if self.id:
            return self.id
        plain = re.sub(r"\W+", " ", MARKER.sub("", self.statement).lower()).strip()
        return "f-" + hashlib.sha1(plain.encode(), usedforsecurity=False).hexdigest()[:12]

    def cited_ids(self) -> list[int]:
        """Every reference the finding points at: `citations`, inline markers and quotes."""
        ids = list(self.citations)
        for match in MARKER.finditer(self.statement):
            ids.extend(int(n) for n in match.group(1).split(","))
        ids.extend(q.reference_id for q in self.quotes)
        return list(dict.fromkeys(ids))

    def render(self) -> str:
        """A Markdown bullet: tag, statement with markers, then the quotes as a nested list."""
        statement = self.statement.strip()
        missing = [
            n
            for n in self.cited_ids()
            if f"[{n}]" not in statement and not _in_group_marker(statement, n)
        ]
        if missing:
            statement = _attach_markers(statement, missing)
        head = f"- **[{self.tag}]** {statement}" if self.tag else f"- {statement}"
        lines = [head]
        for quote in self.quotes:
            lines.append(f'  - > "{quote.text.strip()}" [{quote.reference_id}]')
        return "\n".join(lines)


class Section(BaseModel):
    """A titled section: free prose (with `[N]` markers) followed by its findings."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1)
    body: str = ""
    findings: list[Finding] = Field(default_factory=list)
    requires_citations: bool = Field(
        default=True,
        description="False for computed content (corpus statistics): the checker does not ask its "
        "factual sentences for markers, but still checks every marker it has.",
    )


class Report(BaseModel):
    """A versioned report of one run; `references` are what `[N]` markers resolve to."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1)
    kind: str = Field(default="review", description="review | verification | source_list.")
    sections: list[Section] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    version: int = Field(default=1, ge=1)
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Engine, model, topic, run id, …"
    )

    def section(self, title: str) -> Section | None:
        """The section called `title` (case-insensitive, ignoring any leading number)."""
        wanted = _plain_title(title)
        return next((s for s in self.sections if _plain_title(s.title) == wanted), None)

    def findings(self) -> list[Finding]:
        """Every finding of every section, in order."""
        return [f for s in self.sections for f in s.findings]

    def tag_counts(self) -> dict[str, int]:
        """How many findings carry each tag (a finding's sub-findings, ids `parent:n`, are not counted)."""
        tags: dict[str, int] = {}
        for finding in self.findings():
            if finding.tag and ":" not in finding.id:
                tags[finding.tag] = tags.get(finding.tag, 0) + 1
        return tags

    def reference(self, ref_id: int) -> Reference | None:
        return next((r for r in self.references if r.id == ref_id), None)

    def add_reference(self, reference: Reference | dict[str, Any]) -> int:
        """Add a source and return its marker number; a source already listed (same DOI, paper
        id or title) keeps its number, so authors can cite freely without duplicates."""
        data = reference.model_dump() if isinstance(reference, Reference) else dict(reference)
        candidate = Reference.model_validate({**data, "id": 1})  # the real number is assigned below
        for existing in self.references:
            if existing.key() == candidate.key():
                if candidate.source_text and candidate.source_text not in existing.source_text:
                    existing.source_text = (
                        existing.source_text + "\n" + candidate.source_text
                    ).strip()
                return existing.id
        next_id = max((r.id for r in self.references), default=0) + 1
        self.references.append(candidate.model_copy(update={"id": next_id}))
        return next_id

    def render_markdown(self, *, numbered: bool = True) -> str:
        """The report as Markdown: `# title`, numbered `##` sections, then `## References`."""
        out = [f"# {self.title}", ""]
        for index, section in enumerate(self.sections, start=1):
            title = _plain_title(section.title, keep_case=True)
            out += [f"## {index}. {title}" if numbered else f"## {title}", ""]
            if section.body.strip():
                out += [section.body.strip(), ""]
            groups: dict[str | None, list[Finding]] = {}
            for finding in section.findings:
                groups.setdefault(finding.group, []).append(finding)
            for group, findings in groups.items():
                if group:
                    out += [f"### {group}", ""]
                out += [f.render() for f in findings] + [""]
        if self.references:
            number = f"{len(self.sections) + 1}. " if numbered else ""
            out += [f"## {number}References", ""]
            out += [r.render() for r in sorted(self.references, key=lambda r: r.id)] + [""]
        return "\n".join(out).rstrip() + "\n"


def _plain_title(title: str, *, keep_case: bool = False) -> str:
    stripped = re.sub(r"^\s*\d+[.)]\s*", "", title).strip()
    return stripped if keep_case else stripped.lower()


def _in_group_marker(text: str, ref_id: int) -> bool:
    return any(
        str(ref_id) in [n.strip() for n in m.group(1).split(",")] for m in MARKER.finditer(text)
    )


def _attach_markers(statement: str, ids: list[int]) -> str:
    """Put `[a][b]` before the closing punctuation, where a reader expects them."""
    markers = "".join(f"[{n}]" for n in ids)
    match = re.search(r"([.!?])\s*$", statement)
    if match:
        return statement[: match.start()].rstrip() + " " + markers + match.group(1)
    return statement + " " + markers
