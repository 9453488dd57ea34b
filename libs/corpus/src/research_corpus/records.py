"""What an ingested paper is, how each input format is read, and how a paper becomes chunks.

Formats:
- `scifact`: `{doc_id, title, abstract: [sentences], structured}` (SciFact / BEIR corpus);
- `jsonl`: `{id, title, abstract|text, authors[], year, venue, doi?, citation_count?, keywords[]?}`;
- `pdf-dir`: a folder of PDFs (see `research_corpus.pdf`);
- `bibtex`, `ris`, `csl-json`: reference-manager exports (see `research_corpus.library`).

A paper is split into chunks of whole sentences of at most `chunk_words` words, so each chunk
fits the embedder's 256-token window; a short abstract is a single chunk.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from research_corpus.errors import MalformedRecordError

CHUNK_WORDS = 180
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


@dataclass
class Section:
    """A titled part of a paper's text (`abstract`, `methods`, …) as a list of sentences."""

    name: str
    sentences: list[str]


@dataclass
class PaperRecord:
    """One paper as read from an input file, before it is stored."""

    external_id: str
    title: str
    sections: list[Section]
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str | None = None
    doi: str | None = None
    citation_count: int | None = None
    keywords: list[str] = field(default_factory=list)
    line: int = 0
    # Not stored content (outside the hash): other ids the paper may already be stored under, what
    # the reader noticed (a missing attachment), and the PDF whose text was added.
    aliases: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    attachment: str | None = None

    @property
    def metadata_only(self) -> bool:
        """True when the paper has no text besides its title (no abstract, no PDF)."""
        return not any(s.sentences for s in self.sections)

    @property
    def abstract(self) -> str:
        """The paper's whole text (all sections), as callers quote from it."""
        return " ".join(" ".join(s.sentences) for s in self.sections).strip()

    def content_hash(self) -> str:
        """A digest of everything stored about the paper: equal hash = nothing to re-ingest."""
        payload = json.dumps(
            [
                self.title,
                [[s.name, s.sentences] for s in self.sections],
                self.authors,
                self.year,
                self.venue,
                self.doi,
                self.citation_count,
                self.keywords,
            ],
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class Chunk:
    """A passage to index: its position in the paper, its section and its text."""

    index: int
    section: str
    text: str
    locator: str


def split_sentences(text: str) -> list[str]:
    """Split running text into sentences (good enough for chunk boundaries, not linguistics)."""
    text = re.sub(r"\s+", " ", text).strip()
    return [s for s in _SENTENCE_END.split(text) if s] if text else []


def chunk_paper(paper: PaperRecord, chunk_words: int = CHUNK_WORDS) -> list[Chunk]:
    """Group each section's sentences into chunks of at most `chunk_words` words.

    A sentence longer than the budget is a chunk of its own. The locator says where the chunk
    is: `abstract`, `abstract chunk 2`, `section:methods chunk 1`.
    """
    chunks: list[Chunk] = []
    for section in paper.sections:
        groups: list[list[str]] = []
        current: list[str] = []
        words = 0
        for sentence in section.sentences:
            n = len(sentence.split())
            if current and words + n > chunk_words:
                groups.append(current)
                current, words = [], 0
            current.append(sentence)
            words += n
        if current:
            groups.append(current)
        prefix = "abstract" if section.name == "abstract" else f"section:{section.name}"
        for i, group in enumerate(groups, start=1):
            locator = prefix if len(groups) == 1 else f"{prefix} chunk {i}"
            chunks.append(Chunk(len(chunks), section.name, " ".join(group), locator))
    if not chunks and paper.title:
        chunks.append(Chunk(0, "title", paper.title, "title"))
    return chunks


def _text_list(value: Any, line: int, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in value if v.strip()]
    raise MalformedRecordError(line, f"`{name}` must be a string or a list of strings")


def _optional_int(value: Any, line: int, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise MalformedRecordError(line, f"`{name}` must be an integer, got {value!r}") from None


def parse_scifact(obj: dict[str, Any], line: int) -> PaperRecord:
    """A SciFact corpus line: `doc_id`, `title`, `abstract` as a list of sentences."""
    if "doc_id" not in obj:
        raise MalformedRecordError(line, "missing `doc_id`")
    sentences = [s.strip() for s in _text_list(obj.get("abstract"), line, "abstract")]
    title = str(obj.get("title") or "").strip()
    if not sentences and not title:
        raise MalformedRecordError(line, "neither `title` nor `abstract`")
    return PaperRecord(str(obj["doc_id"]), title, [Section("abstract", sentences)], line=line)


def parse_generic(obj: dict[str, Any], line: int) -> PaperRecord:
    """A generic JSONL line: `{id, title, abstract|text, authors[], year, venue, doi?, …}`."""
    if obj.get("id") in (None, ""):
        raise MalformedRecordError(line, "missing `id`")
    body = obj.get("abstract") if obj.get("abstract") is not None else obj.get("text")
    parts = _text_list(body, line, "abstract|text")
    sentences = parts if len(parts) > 1 else split_sentences(parts[0]) if parts else []
    title = str(obj.get("title") or "").strip()
    if not sentences and not title:
        raise MalformedRecordError(line, "neither `title` nor `abstract|text`")
    authors = obj.get("authors") or []
    if not isinstance(authors, list):
        raise MalformedRecordError(line, "`authors` must be a list")
    return PaperRecord(
        external_id=str(obj["id"]),
        title=title,
        sections=[Section("abstract", sentences)],
        authors=[str(a.get("name", "")) if isinstance(a, dict) else str(a) for a in authors],
        year=_optional_int(obj.get("year"), line, "year"),
        venue=(str(obj["venue"]).strip() or None) if obj.get("venue") else None,
        doi=(str(obj["doi"]).strip() or None) if obj.get("doi") else None,
        citation_count=_optional_int(obj.get("citation_count"), line, "citation_count"),
        keywords=_text_list(obj.get("keywords"), line, "keywords"),
        line=line,
    )


PARSERS = {"scifact": parse_scifact, "jsonl": parse_generic}


def read_jsonl(path: Path, fmt: str) -> Iterator[PaperRecord | MalformedRecordError]:
    """Each line of `path` as a record, or as the error that line has (reading goes on)."""
    parse = PARSERS[fmt]
    with path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                yield MalformedRecordError(
                    number, f"invalid JSON ({exc.msg} at column {exc.colno})"
                )
                continue
            if not isinstance(obj, dict):
                yield MalformedRecordError(number, "a record must be a JSON object")
                continue
            try:
                yield parse(obj, number)
            except MalformedRecordError as exc:
                yield exc
