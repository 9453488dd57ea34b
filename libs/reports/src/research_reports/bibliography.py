"""Reference exports a reference manager can import: BibTeX (via bibtexparser), RIS (via rispy)
and CSL-JSON (the citeproc input format, written directly: it is plain JSON).

Each takes any iterable of `Reference`, so a review, a verification and a source list export
the same way. Author strings arrive in whatever form the source used ("Yao, Shunyu",
"Shunyu Yao", PubMed's "Yao S"); `split_name` turns each into family / given parts.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

import bibtexparser
import rispy
from bibtexparser.model import Entry, Field

from research_reports.model import Reference

_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def split_name(name: str) -> tuple[str, str]:
    """(family, given) of an author string; a single word is a family name (organisations)."""
    name = re.sub(r"\s+", " ", name).strip()
    if "," in name:
        family, given = name.split(",", 1)
        return family.strip(), given.strip()
    words = name.split(" ")
    if len(words) == 1:
        return name, ""
    if re.fullmatch(r"[A-Z]{1,3}", words[-1]):  # PubMed style: "Yao S", "van der Berg JA"
        return " ".join(words[:-1]), words[-1]
    particles = {"van", "von", "der", "den", "de", "da", "del", "di", "la", "le"}
    start = len(words) - 1
    while start > 1 and words[start - 1].lower() in particles:
        start -= 1
    return " ".join(words[start:]), " ".join(words[:start])


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def _latex(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def citation_keys(references: Iterable[Reference]) -> dict[int, str]:
    """Stable BibTeX keys: first author's family name + year + first title word, with a/b/…
    suffixes when two references would collide."""
    keys: dict[int, str] = {}
    used: set[str] = set()
    for ref in references:
        family = split_name(ref.authors[0])[0] if ref.authors else "anon"
        word = next((w for w in re.findall(r"[A-Za-z]+", _ascii(ref.title)) if len(w) > 3), "ref")
        base = re.sub(r"[^a-z0-9]", "", _ascii(family).lower()) + (str(ref.year) if ref.year else "nd") + word.lower()
        key, suffix = base, 0
        while key in used:
            suffix += 1
            key = base + chr(ord("a") + suffix - 1)
        used.add(key)
        keys[ref.id] = key
    return keys


def to_bibtex(references: Iterable[Reference]) -> str:
    """BibTeX `@article` entries (`@misc` when no venue is known), LaTeX specials escaped."""
    refs = list(references)
    keys = citation_keys(refs)
    library = bibtexparser.Library()
    for ref in refs:
        fields = [Field("title", _latex(ref.title))]
        if ref.authors:
            fields.append(Field("author", " and ".join(_latex(_bibtex_name(a)) for a in ref.authors)))
        if ref.year:
            fields.append(Field("year", str(ref.year)))
        if ref.venue:
            fields.append(Field("journal", _latex(ref.venue)))
        if ref.doi:
            fields.append(Field("doi", ref.doi))
        if ref.url:
            fields.append(Field("url", ref.url))
        if ref.paper_id:
            fields.append(Field("note", _latex(f"paper id: {ref.paper_id}")))
        library.add(Entry("article" if ref.venue else "misc", keys[ref.id], fields))
    return bibtexparser.write_string(library)


def _bibtex_name(name: str) -> str:
    family, given = split_name(name)
    return f"{family}, {given}" if given else "{" + family + "}"


class _RisWriter(rispy.RisWriter):
    """rispy's writer without its `1.` line before each record, which reference managers do not expect."""

    def set_header(self, count: int) -> str:
        return ""


def to_ris(references: Iterable[Reference]) -> str:
    """RIS records (`JOUR`, or `GEN` without a venue) as rispy writes them."""
    records: list[dict[str, Any]] = []
    for ref in references:
        record: dict[str, Any] = {
            "type_of_reference": "JOUR" if ref.venue else "GEN",
            "id": str(ref.id),
            "title": ref.title,
            "authors": [", ".join(p for p in split_name(a) if p) for a in ref.authors],
        }
        if ref.year:
            record["year"] = str(ref.year)
        if ref.venue:
            record["journal_name"] = ref.venue
        if ref.doi:
            record["doi"] = ref.doi
        if ref.url:
            record["urls"] = [ref.url]
        if ref.paper_id:
            record["notes"] = [f"paper id: {ref.paper_id}"]
        records.append(record)
    return rispy.dumps(records, implementation=_RisWriter)


def to_csl_json(references: Iterable[Reference]) -> list[dict[str, Any]]:
    """CSL-JSON items (the input of citeproc-js / citeproc-py and of Zotero's importer)."""
    refs = list(references)
    keys = citation_keys(refs)
    items = []
    for ref in refs:
        item: dict[str, Any] = {"id": keys[ref.id], "type": "article-journal" if ref.venue else "document", "title": ref.title}
        if ref.authors:
            item["author"] = [_csl_name(a) for a in ref.authors]
        if ref.year:
            item["issued"] = {"date-parts": [[ref.year]]}
        if ref.venue:
            item["container-title"] = ref.venue
        if ref.doi:
            item["DOI"] = ref.doi
        if ref.url:
            item["URL"] = ref.url
        if ref.paper_id:
            item["note"] = f"paper id: {ref.paper_id}"
        items.append(item)
    return items


def _csl_name(name: str) -> dict[str, str]:
    family, given = split_name(name)
    return {"family": family, "given": given} if given else {"literal": family}


def to_csl_json_text(references: Iterable[Reference]) -> str:
    return json.dumps(to_csl_json(references), ensure_ascii=False, indent=2)
