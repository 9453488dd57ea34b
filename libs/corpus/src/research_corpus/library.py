"""A researcher's own library as corpus papers: BibTeX, RIS and CSL-JSON exports.

Zotero, Mendeley and EndNote export these; each record becomes a `PaperRecord` with its title,
authors ("Given Family"), year, venue, DOI, abstract and keywords. A record's attached PDF
(BibTeX `file`, RIS `L1`, a CSL-JSON `file`; relative paths are relative to the export file) is
read with the PDF reader of `pdf-dir` ingests: its sections follow the record's abstract. A
missing or unreadable attachment is a note on the record, never a reason to drop it. A record
with neither abstract nor PDF is kept as a metadata-only paper (its title is its only chunk).

Ids: a record with a DOI is `doi:<doi>` (lower case), otherwise `key:<record key>` (the BibTeX
key, the RIS `ID`, the CSL `id`; a RIS record without `ID` gets a key from its first author,
year and title). The record key is also an alias, so a record that gains a DOI in a later
export updates the paper it was stored as (see `ingest._adopt_stored_ids`).

Bad records (no title, a block the parser cannot read, a duplicate key, a CSL-JSON item nested
too deeply to decode) are yielded as `MalformedRecordError` with the line the record starts on;
reading goes on with the next one. An export is read whole, so a file over `MAX_LIBRARY_BYTES`
is one error for the whole file (line 0) and nothing of it is read.

Paths: an import reads the export and the PDFs its records name (absolute paths too) with the
rights of whoever runs it. It is offered only as the local `research-engine corpus ingest`
command; no HTTP route or MCP tool imports a library, and one that did must take the file's
bytes and ignore attachments rather than hand this module a path on the server.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

from research_corpus.errors import MalformedRecordError
from research_corpus.records import PaperRecord, Section, split_sentences

LIBRARY_FORMATS = ("bibtex", "ris", "csl-json")
MAX_LIBRARY_BYTES = (
    256 * 1024 * 1024
)  # an export is read whole (and CSL-JSON decoded whole): far beyond any real library
_YEAR = re.compile(r"\b(1[5-9]\d{2}|20\d{2}|21\d{2})\b")
_RIS_TAG = re.compile(r"^([A-Z][A-Z0-9])  -( (.*))?$")
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_UNESCAPED_COLON = re.compile(r"(?<!\\):")
_Raw = TypeVar("_Raw")  # a record as a reader finds it, before it is a `PaperRecord`


def normalize_doi(value: str | None) -> str | None:
    """`10.1000/xyz` from `https://doi.org/10.1000/XYZ`, `doi:10.1000/xyz`, `10.1000%2Fxyz` …;
    None when not a DOI."""
    if not value:
        return None
    doi = unquote(_DOI_PREFIX.sub("", value.strip())).strip().lower()
    return doi if doi.startswith("10.") and "/" in doi else None


def display_name(name: str) -> str:
    """'Given Family' from 'Family, Given' (BibTeX and RIS order); other forms unchanged."""
    name = re.sub(r"\s+", " ", name).strip().strip(",")
    if name.count(",") == 1:
        family, given = (part.strip() for part in name.split(","))
        return f"{given} {family}".strip()
    if name.count(",") == 2:  # BibTeX "von Last, Jr, First"
        family, suffix, given = (part.strip() for part in name.split(","))
        return f"{given} {family} {suffix}".strip()
    return name


def _year(value: Any) -> int | None:
    match = _YEAR.search(str(value or ""))
    return int(match.group(1)) if match else None


def _clean(value: Any) -> str:
    return re.sub(r"\s+", " ", str(value or "")).strip()


def _keywords(value: Any) -> list[str]:
    items = value if isinstance(value, list) else re.split(r"[;,]", str(value or ""))
    return [k for k in (_clean(item) for item in items) if k]


def _derived_key(authors: list[str], year: int | None, title: str) -> str:
    family = (
        re.sub(r"[^a-z]", "", (authors[0].split()[-1] if authors else "anon").lower()) or "anon"
    )
    title_key = re.sub(r"\W+", " ", title.lower()).strip().encode()
    digest = hashlib.sha1(title_key, usedforsecurity=False).hexdigest()[:8]
    return f"{family}{year or 'nd'}-{digest}"


def _attachment_path(raw: str, base: Path) -> Path | None:
    """The file a path or `file://` URL names, relative paths against the export's folder."""
    raw = raw.strip()
    if not raw:
        return None
    if raw.lower().startswith("file://"):
        raw = unquote(urlparse(raw).path)
    elif re.match(
        r"^[a-z][a-z0-9+.-]+://", raw, re.IGNORECASE
    ):  # internal-pdf://, http:// …: not a local file
        return Path(raw)
    path = Path(raw)
    return path if path.is_absolute() else base / path


def _bibtex_pdf(field: str) -> str | None:
    """The first PDF of a BibTeX `file` field.

    Zotero: `Full Text PDF:files/12/a.pdf:application/pdf;Snapshot:…`; Mendeley: `:C\\:/x/a.pdf:pdf`;
    Better BibTeX and JabRef: a bare path. Escaped colons (`\\:`) belong to the path.
    """
    for attachment in re.split(r"(?<!\\);", field):
        parts = [
            p.replace("\\:", ":").replace("\\\\", "\\") for p in _UNESCAPED_COLON.split(attachment)
        ]
        if len(parts) >= 3:
            path, kind = ":".join(parts[1:-1]), parts[-1].lower()
        else:
            path, kind = parts[-1] if len(parts) == 1 else parts[0] + ":" + parts[1], ""
        if path.strip() and (path.lower().rstrip().endswith(".pdf") or "pdf" in kind):
            return path.strip()
    return None


def _with_pdf(paper: PaperRecord, raw_path: str | None, base: Path) -> PaperRecord:
    """Add the attached PDF's sections to `paper`; a missing or unreadable PDF becomes a note."""
    from research_corpus.pdf import read_pdf

    path = _attachment_path(raw_path, base) if raw_path else None
    if path is None:
        return paper
    if not path.is_file():
        paper.notes.append(f"attached PDF not found: {raw_path}")
        return paper
    try:
        pdf = read_pdf(path, paper.external_id, paper.line)
    except MalformedRecordError as exc:
        paper.notes.append(f"attached PDF not ingested: {exc.reason}")
        return paper
    # The record's abstract is cleaner than the PDF's front matter, which also holds the title
    # page; the PDF's own sections (introduction, methods, …) follow it.
    keep = [s for s in pdf.sections if s.name != "abstract" or not paper.abstract]
    paper.sections = [s for s in paper.sections if s.sentences] + keep
    paper.attachment = str(path)
    return paper


def _paper(
    *,
    key: str | None,
    title: str,
    authors: list[str],
    year: int | None,
    venue: str,
    doi: str | None,
    abstract: str,
    keywords: list[str],
    line: int,
) -> PaperRecord:
    if not title:
        raise MalformedRecordError(line, "no title")
    authors = [a for a in (display_name(a) for a in authors) if a]
    key = key or _derived_key(authors, year, title)
    aliases = [f"key:{key}"]
    return PaperRecord(
        external_id=f"doi:{doi}" if doi else aliases[0],
        title=title,
        sections=[Section("abstract", split_sentences(abstract))],
        authors=authors,
        year=year,
        venue=venue or None,
        doi=doi,
        keywords=keywords,
        line=line,
        aliases=aliases if doi else [],
    )


# --- BibTeX -------------------------------------------------------------------------------------

_VERBATIM_FIELDS = frozenset(
    {"doi"}
)  # read as written: `%` there is a character (`%7D`), not a LaTeX comment
_ESCAPED_SPECIAL = re.compile(r"\\([_%&#$])")


def _latex_decoding() -> Any:
    """bibtexparser's LaTeX decoding of every field but the verbatim ones (`_VERBATIM_FIELDS`)."""
    from bibtexparser import middlewares

    class TextFieldsDecoding(middlewares.LatexDecodingMiddleware):
        def transform_entry(self, entry: Any, library: Any) -> Any:
            kept = {f.key: f.value for f in entry.fields if f.key.lower() in _VERBATIM_FIELDS}
            block = super().transform_entry(entry, library)
            for field in entry.fields:
                if field.key in kept:
                    field.value = kept[field.key]
            return block

    return TextFieldsDecoding()


def read_bibtex(path: Path) -> Iterator[PaperRecord | MalformedRecordError]:
    """Each entry of a `.bib` file (LaTeX decoded but the DOI, co-authors split) or the error it has."""
    import bibtexparser
    from bibtexparser import middlewares

    # The parser logs each failed block as a warning; the ingest report says it with its line.
    parser_log = logging.getLogger("bibtexparser")
    level = parser_log.level
    parser_log.setLevel(logging.ERROR)
    try:
        library = bibtexparser.parse_string(
            _read_text(path),
            append_middleware=[_latex_decoding(), middlewares.SeparateCoAuthors()],
        )
    finally:
        parser_log.setLevel(level)
    failed = []
    for block in library.failed_blocks:
        error = getattr(block, "error", None)
        reason = f"unreadable BibTeX entry ({_clean(getattr(error, 'abort_reason', '') or error or 'syntax error')})"
        if type(block).__name__ == "DuplicateBlockKeyBlock":
            reason = f"duplicate key {getattr(block, 'key', '')!r}"
        failed.append(MalformedRecordError((block.start_line or 0) + 1, reason))
    entries = [((entry.start_line or 0) + 1, entry) for entry in library.entries]
    blocks: list[MalformedRecordError | tuple[int, Any]] = [*failed, *entries]
    in_file_order = sorted(blocks, key=_line)
    yield from _parsed(in_file_order, lambda entry, line: _bibtex_record(entry, line, path.parent))


def _line(item: MalformedRecordError | tuple[int, Any]) -> int:
    return item.line if isinstance(item, MalformedRecordError) else item[0]


def _parsed(
    items: Iterable[MalformedRecordError | tuple[int, _Raw]],
    parse: Callable[[_Raw, int], PaperRecord],
) -> Iterator[PaperRecord | MalformedRecordError]:
    """Each of `items` (a raw record with the line it starts on) as `parse(raw, line)` makes it,
    or the error reading or parsing it gave."""
    for item in items:
        if isinstance(item, MalformedRecordError):
            yield item
            continue
        line, raw = item
        try:
            yield parse(raw, line)
        except MalformedRecordError as exc:
            yield exc


def _bibtex_record(entry: Any, line: int, base: Path) -> PaperRecord:
    fields = {f.key.lower(): f.value for f in entry.fields}
    authors = fields.get("author") or fields.get("editor") or []
    paper = _paper(
        key=entry.key,
        title=_clean(fields.get("title")),
        authors=[_clean(a) for a in (authors if isinstance(authors, list) else [authors])],
        year=_year(fields.get("year") or fields.get("date")),
        venue=_clean(
            fields.get("journal")
            or fields.get("journaltitle")
            or fields.get("booktitle")
            or fields.get("publisher")
            or fields.get("howpublished")
        ),
        doi=normalize_doi(
            _ESCAPED_SPECIAL.sub(r"\1", _clean(fields.get("doi")))
        ),  # `10.1000/a\_b` as some write it
        abstract=_clean(fields.get("abstract")),
        keywords=_keywords(fields.get("keywords")),
        line=line,
    )
    return _with_pdf(paper, _bibtex_pdf(str(fields["file"])) if fields.get("file") else None, base)


# --- RIS ----------------------------------------------------------------------------------------


def _ris_blocks(text: str) -> Iterator[tuple[int, list[str]] | MalformedRecordError]:
    """The lines of each `TY` … `ER` record with the line it starts on."""
    start = 0
    lines: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        tag = _RIS_TAG.match(raw.rstrip())
        if tag and tag.group(1) == "TY":
            if lines:
                yield MalformedRecordError(start, "record has no `ER` end tag")
            start, lines = number, [raw.rstrip()]
        elif tag and tag.group(1) == "ER":
            if lines:
                yield start, [*lines, "ER  - "]
            else:
                yield MalformedRecordError(number, "`ER` without a `TY` record start")
            lines = []
        elif lines:
            lines.append(raw.rstrip())
        elif raw.strip():
            yield MalformedRecordError(number, f"text outside a record: {raw.strip()[:40]!r}")
    if lines:
        yield MalformedRecordError(start, "record has no `ER` end tag")


def read_ris(path: Path) -> Iterator[PaperRecord | MalformedRecordError]:
    """Each `TY` … `ER` record of a `.ris` file (rispy's tag names) or the error it has."""
    import rispy

    def parse(lines: list[str], line: int) -> PaperRecord:
        try:
            entries = rispy.loads("\n".join(lines) + "\n")
            return _ris_record(entries[0], line, path.parent)
        except (ValueError, OSError, IndexError, KeyError) as exc:
            raise MalformedRecordError(line, f"unreadable RIS record ({exc})") from exc

    yield from _parsed(_ris_blocks(_read_text(path)), parse)


def _ris_record(entry: dict[str, Any], line: int, base: Path) -> PaperRecord:
    def first(*keys: str) -> str:
        for key in keys:
            value = entry.get(key)
            value = value[0] if isinstance(value, list) and value else value
            if _clean(value):
                return _clean(value)
        return ""

    # L1 / L2 are single-valued for rispy (a later line wins); some exporters join several with ';'.
    attachments = [
        a.strip()
        for key in ("file_attachments1", "file_attachments2")
        for a in str(entry.get(key) or "").split(";")
        if a.strip()
    ]
    pdf = next(
        (a for a in attachments if a.lower().endswith(".pdf")),
        attachments[0] if attachments else None,
    )
    paper = _paper(
        key=first("id") or None,
        title=first("title", "primary_title", "short_title"),
        authors=[_clean(a) for a in [*entry.get("authors", []), *entry.get("first_authors", [])]],
        year=_year(first("year", "publication_year", "date")),
        venue=first(
            "secondary_title",
            "journal_name",
            "alternate_title3",
            "alternate_title1",
            "alternate_title2",
        ),
        doi=normalize_doi(first("doi")),
        abstract=first("abstract", "notes_abstract"),
        keywords=_keywords(entry.get("keywords", [])),
        line=line,
    )
    return _with_pdf(paper, pdf, base)


# --- CSL-JSON -----------------------------------------------------------------------------------

TOO_DEEP = "a CSL-JSON item nested too deeply to read (skipped)"


def _value_end(text: str, pos: int) -> int | None:
    """Where the JSON array or object at `pos` ends, found without recursion (the decoder
    recurses once per level and gives up on deep nesting); None when it never closes."""
    depth, index, in_string = 0, pos, False
    while index < len(text):
        char = text[index]
        if in_string:
            if char == "\\":
                index += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return None


def _json_items(text: str) -> Iterator[tuple[int, Any] | MalformedRecordError]:
    """Each element of a top-level JSON array with the line it starts on (a lone object: one item).

    Elements are decoded one by one, so the items before a syntax error are still read, and an
    item nested too deeply to decode is skipped with its reason, the items after it still read.
    """
    decoder = json.JSONDecoder()

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    def skip(pos: int) -> int:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        return pos

    pos = skip(0)
    if not text.startswith("[", pos):
        try:
            yield line_of(pos), decoder.raw_decode(text, pos)[0]
        except json.JSONDecodeError as exc:
            yield MalformedRecordError(
                exc.lineno, f"invalid JSON ({exc.msg}); expected a CSL-JSON array"
            )
        except RecursionError:
            yield MalformedRecordError(line_of(pos), TOO_DEEP)
        return
    pos = skip(pos + 1)
    if text.startswith("]", pos):
        return
    while pos < len(text):
        found: tuple[int, Any] | MalformedRecordError
        try:
            item, end = decoder.raw_decode(text, pos)
            found = (line_of(pos), item)
        except json.JSONDecodeError as exc:
            yield MalformedRecordError(
                exc.lineno, f"invalid JSON ({exc.msg}); the rest of the file was not read"
            )
            return
        except RecursionError:
            closed = _value_end(text, pos)
            if closed is None:
                yield MalformedRecordError(
                    line_of(pos),
                    "invalid JSON (an item is not closed); the rest of the file was not read",
                )
                return
            end, found = closed, MalformedRecordError(line_of(pos), TOO_DEEP)
        yield found
        pos = skip(end)
        if text.startswith(",", pos):
            pos = skip(pos + 1)
        elif text.startswith("]", pos):
            return
        else:
            yield MalformedRecordError(
                line_of(pos),
                "invalid JSON (expected `,` or `]`); the rest of the file was not read",
            )
            return
    yield MalformedRecordError(line_of(pos), "invalid JSON (the array is not closed)")


def _csl_name(name: Any, line: int) -> str:
    if isinstance(name, str):
        return name
    if not isinstance(name, dict):
        raise MalformedRecordError(line, "`author` entries must be objects")
    if name.get("literal"):
        return _clean(name["literal"])
    family = " ".join(
        _clean(name.get(k)) for k in ("non-dropping-particle", "family") if name.get(k)
    )
    return _clean(f"{_clean(name.get('given'))} {family} {_clean(name.get('suffix'))}")


def _csl_year(issued: Any) -> int | None:
    if isinstance(issued, dict):
        parts = issued.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            return _year(parts[0][0])
        return _year(issued.get("raw") or issued.get("literal"))
    return _year(issued)


def read_csl_json(path: Path) -> Iterator[PaperRecord | MalformedRecordError]:
    """Each item of a CSL-JSON array (Zotero's "CSL JSON" export) or the error it has."""

    def parse(obj: Any, line: int) -> PaperRecord:
        try:
            return _csl_record(obj, line, path.parent)
        except RecursionError:  # a field nested too deeply to turn into text
            raise MalformedRecordError(line, TOO_DEEP) from None

    yield from _parsed(_json_items(_read_text(path)), parse)


def _csl_record(obj: Any, line: int, base: Path) -> PaperRecord:
    if not isinstance(obj, dict):
        raise MalformedRecordError(line, "a CSL-JSON item must be an object")
    authors = obj.get("author") or obj.get("editor") or []
    if not isinstance(authors, list):
        raise MalformedRecordError(line, "`author` must be a list")
    paper = _paper(
        key=_clean(obj.get("id")) or None,
        title=_clean(obj.get("title")),
        authors=[_csl_name(a, line) for a in authors],
        year=_csl_year(obj.get("issued")),
        venue=_clean(obj.get("container-title") or obj.get("publisher")),
        doi=normalize_doi(_clean(obj.get("DOI") or obj.get("doi"))),
        abstract=_clean(obj.get("abstract")),
        keywords=_keywords(obj.get("keyword") or obj.get("keywords")),
        line=line,
    )
    attachment = obj.get("file")
    return _with_pdf(paper, attachment if isinstance(attachment, str) else None, base)


READERS: dict[str, Callable[[Path], Iterator[PaperRecord | MalformedRecordError]]] = {
    "bibtex": read_bibtex,
    "ris": read_ris,
    "csl-json": read_csl_json,
}


class _TooLarge(Exception):
    def __init__(self, read: int) -> None:
        self.read = read


def _read_text(path: Path, limit: int | None = None) -> str:
    """The whole export as text, read no further than `limit` bytes (a FIFO or a device reports
    no size, so the size is counted while reading, not asked for)."""
    limit = MAX_LIBRARY_BYTES if limit is None else limit
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise _TooLarge(len(data))
    return data.decode("utf-8-sig")


def read_library(path: Path, fmt: str) -> Iterator[PaperRecord | MalformedRecordError]:
    """The records of a BibTeX / RIS / CSL-JSON export (`fmt` one of `LIBRARY_FORMATS`)."""
    try:
        yield from READERS[fmt](path)
    except UnicodeDecodeError as exc:
        yield MalformedRecordError(0, f"{path.name} is not UTF-8 text ({exc.reason})")
    except _TooLarge:
        yield MalformedRecordError(
            0,
            f"{path.name} is larger than {MAX_LIBRARY_BYTES / 2**20:g} MiB, the most a library "
            "export may be (it is read whole): split it into several exports",
        )


def sniff_library(path: Path, head: str) -> str | None:
    """The library format of a file by its extension, else by its first characters; None if neither."""
    by_suffix = {
        ".bib": "bibtex",
        ".bibtex": "bibtex",
        ".ris": "ris",
        ".csl": "csl-json",
        ".csljson": "csl-json",
    }
    if path.suffix.lower() in by_suffix:
        return by_suffix[path.suffix.lower()]
    stripped = head.lstrip("\ufeff \t\r\n")
    if stripped.startswith("@"):
        return "bibtex"
    if _RIS_TAG.match(stripped.split("\n", 1)[0].rstrip()) and stripped.startswith("TY"):
        return "ris"
    if stripped.startswith("["):
        return "csl-json"
    return None
