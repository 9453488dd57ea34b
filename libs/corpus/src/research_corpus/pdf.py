"""Read a folder of PDFs as corpus papers, split into sections by their headings (pypdf).

Each `*.pdf` under the folder becomes one paper whose external id is its path relative to the
folder. Title: the PDF's metadata title, else its first text line. Sections start at lines
that are a known heading (Abstract, Introduction, Methods, Results, Discussion, …, optionally
numbered); text before the first heading is the `abstract` section; `References` and what
follows are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from research_corpus.errors import MalformedRecordError
from research_corpus.records import PaperRecord, Section, split_sentences

HEADINGS = {
    "abstract": "abstract",
    "summary": "abstract",
    "background": "introduction",
    "introduction": "introduction",
    "methods": "methods",
    "materials and methods": "methods",
    "methods and materials": "methods",
    "patients and methods": "methods",
    "method": "methods",
    "results": "results",
    "findings": "results",
    "results and discussion": "results",
    "discussion": "discussion",
    "conclusion": "conclusion",
    "conclusions": "conclusion",
    "limitations": "discussion",
}
STOP_HEADINGS = {"references", "bibliography", "acknowledgements", "acknowledgments"}
_HEADING = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?|[IVX]+\.)?\s*([A-Za-z][A-Za-z ]{2,40}?)\s*:?\s*$")
_YEAR = re.compile(r"\b(19|20)\d{2}\b")


def _heading(line: str) -> str | None:
    match = _HEADING.match(line)
    if not match:
        return None
    name = match.group(1).strip().lower()
    if name in STOP_HEADINGS:
        return "__stop__"
    return HEADINGS.get(name)


def split_sections(text: str) -> list[Section]:
    """Cut a PDF's text into named sections of sentences (see module docstring)."""
    sections: list[tuple[str, list[str]]] = [("abstract", [])]
    for line in text.splitlines():
        name = _heading(line)
        if name == "__stop__":
            break
        if name:
            sections.append((name, []))
        elif line.strip():
            sections[-1][1].append(line.strip())
    merged: dict[str, list[str]] = {}
    for name, lines in sections:
        # Re-join hyphenated line breaks before sentence splitting.
        body = re.sub(r"-\s*\n\s*", "", "\n".join(lines)).replace("\n", " ")
        merged.setdefault(name, []).extend(split_sentences(body))
    return [Section(name, sentences) for name, sentences in merged.items() if sentences]


def read_pdf(path: Path, external_id: str, position: int) -> PaperRecord:
    """One PDF as a paper; raises `MalformedRecordError` when it cannot be read or has no text."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        text = "\n".join(page.extract_text() or "" for page in reader.pages)
        meta: Mapping[str, Any] = reader.metadata or {}
    except (PdfReadError, OSError, ValueError) as exc:
        raise MalformedRecordError(position, f"{external_id}: unreadable PDF ({exc})") from None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise MalformedRecordError(position, f"{external_id}: no extractable text (scanned PDF?)")
    title = str(meta.get("/Title") or "").strip() or lines[0][:300]
    year = _YEAR.search(str(meta.get("/CreationDate") or ""))
    authors = [
        a.strip() for a in re.split(r"[;,]| and ", str(meta.get("/Author") or "")) if a.strip()
    ]
    return PaperRecord(
        external_id=external_id,
        title=title,
        sections=split_sections(text),
        authors=authors,
        year=int(year.group(0)) if year else None,
        line=position,
    )


def read_pdf_dir(folder: Path) -> Iterator[PaperRecord | MalformedRecordError]:
    """Every PDF under `folder` (sorted), as a paper or as the error it has."""
    for position, path in enumerate(sorted(folder.glob("**/*.pdf")), start=1):
        external_id = path.relative_to(folder).as_posix()
        try:
            yield read_pdf(path, external_id, position)
        except MalformedRecordError as exc:
            yield exc
