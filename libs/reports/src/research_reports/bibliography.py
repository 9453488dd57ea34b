"""Reference exports a reference manager can import: BibTeX (via bibtexparser), RIS (via rispy)
and CSL-JSON (the citeproc input format, written directly: it is plain JSON).

Each takes any iterable of `Reference`, so a review, a verification and a source list export
the same way. Author strings arrive in whatever form the source used ("Yao, Shunyu",
"Shunyu Yao", PubMed's "Yao S"); `split_name` turns each into family / given parts.

Every value comes from a source's metadata, which anyone can write, so nothing in it may end
its field and start another (a `file = {…}` a reference manager would follow, an RIS `L1`
line): BibTeX text has its line breaks folded and LaTeX specials escaped; a DOI or URL (fields
read verbatim) has braces, backslashes and blanks percent-encoded, as a URL writes them; an RIS
value is one line. The three formats read back through the corpus importer
(`research_corpus.library`) with the same titles, authors, years, venues and DOIs.
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

from research_reports.model import Reference, web_url

_UNSAFE_VERBATIM = re.compile(r"[{}\\\s\x00-\x1f\x7f]")
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


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
    """One line of BibTeX text: blanks and line breaks folded (a line starting `@` opens an entry
    for some readers), LaTeX specials escaped (a bare `}` would close the field)."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in " ".join(text.split()))


def _verbatim(value: str) -> str:
    """A DOI or URL for a BibTeX field read verbatim: braces, backslashes, blanks and control
    characters percent-encoded (UTF-8), so the field holds exactly one value and still resolves."""
    return _UNSAFE_VERBATIM.sub(
        lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), value.strip()
    )


def _one_line(value: str) -> str:
    """An RIS value: every line break (all that `str.splitlines` splits on) and blank run folded to one space."""
    return " ".join(value.split())


def citation_keys(references: Iterable[Reference]) -> dict[int, str]:
    """Stable BibTeX keys: first author's family name + year + first title word, with a/b/…
    suffixes when two references would collide."""
    keys: dict[int, str] = {}
    used: set[str] = set()
    for ref in references:
        family = split_name(ref.authors[0])[0] if ref.authors else "anon"
        word = next((w for w in re.findall(r"[A-Za-z]+", _ascii(ref.title)) if len(w) > 3), "ref")
        base = (
            re.sub(r"[^a-z0-9]", "", _ascii(family).lower())
            + (str(ref.year) if ref.year else "nd")
            + word.lower()
        )
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
            fields.append(Field("author", " and ".join(_bibtex_name(a) for a in ref.authors)))
        if ref.year:
            fields.append(Field("year", str(ref.year)))
        if ref.venue:
            fields.append(Field("journal", _latex(ref.venue)))
        if ref.doi:
            fields.append(Field("doi", _verbatim(ref.doi)))
        if web_url(ref.url):
            fields.append(Field("url", _verbatim(ref.url or "")))
        if ref.paper_id:
            fields.append(Field("note", _latex(f"paper id: {ref.paper_id}")))
        library.add(Entry("article" if ref.venue else "misc", keys[ref.id], fields))
    return bibtexparser.write_string(library)


def _bibtex_name(name: str) -> str:
    """`Family, Given`, or `{Name}` for a one-word name (an organisation: never split), escaped."""
    family, given = (_latex(part) for part in split_name(name))
    return f"{family}, {given}" if given else "{" + family + "}"


class _RisWriter(rispy.RisWriter):
    """rispy's writer without its `1.` line before each record, which reference managers do not expect."""

    def set_header(self, count: int) -> str:
        return ""


def to_ris(references: Iterable[Reference]) -> str:
    """RIS records (`JOUR`, or `GEN` without a venue) as rispy writes them, each value on one line."""
    records: list[dict[str, Any]] = []
    for ref in references:
        record: dict[str, Any] = {
            "type_of_reference": "JOUR" if ref.venue else "GEN",
            "id": str(ref.id),
            "title": _one_line(ref.title),
            "authors": [_one_line(", ".join(p for p in split_name(a) if p)) for a in ref.authors],
        }
        if ref.year:
            record["year"] = str(ref.year)
        if ref.venue:
            record["journal_name"] = _one_line(ref.venue)
        if ref.doi:
            record["doi"] = _one_line(ref.doi)
        if web_url(ref.url):
            record["urls"] = [_one_line(ref.url or "")]
        if ref.paper_id:
            record["notes"] = [_one_line(f"paper id: {ref.paper_id}")]
        records.append(record)
    return rispy.dumps(records, implementation=_RisWriter)


def to_csl_json(references: Iterable[Reference]) -> list[dict[str, Any]]:
    """CSL-JSON items (the input of citeproc-js / citeproc-py and of Zotero's importer)."""
    refs = list(references)
    keys = citation_keys(refs)
    items = []
    for ref in refs:
        item: dict[str, Any] = {
            "id": keys[ref.id],
            "type": "article-journal" if ref.venue else "document",
            "title": ref.title,
        }
        if ref.authors:
            item["author"] = [_csl_name(a) for a in ref.authors]
        if ref.year:
            item["issued"] = {"date-parts": [[ref.year]]}
        if ref.venue:
            item["container-title"] = ref.venue
        if ref.doi:
            item["DOI"] = ref.doi
        if web_url(ref.url):
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
