"""One entry point for every export format, so the gateway's `?format=` and the CLI's
`--format` accept the same names and answer with the same media types."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from research_reports.bibliography import to_bibtex, to_csl_json_text, to_ris
from research_reports.model import Report
from research_reports.pdf import to_pdf


class ExportFormat(StrEnum):
    markdown = "markdown"
    pdf = "pdf"
    bibtex = "bibtex"
    ris = "ris"
    csl_json = "csl-json"


@dataclass(frozen=True)
class Export:
    """An exported file: its bytes, media type and a suggested file extension."""

    content: bytes
    media_type: str
    extension: str


EXPORT_FORMATS: dict[ExportFormat, tuple[str, str]] = {
    ExportFormat.markdown: ("text/markdown; charset=utf-8", "md"),
    ExportFormat.pdf: ("application/pdf", "pdf"),
    ExportFormat.bibtex: ("application/x-bibtex; charset=utf-8", "bib"),
    ExportFormat.ris: ("application/x-research-info-systems; charset=utf-8", "ris"),
    ExportFormat.csl_json: ("application/vnd.citationstyles.csl+json; charset=utf-8", "json"),
}


def export_report(report: Report, fmt: ExportFormat | str) -> Export:
    """Export `report` (Markdown, PDF) or its references (BibTeX, RIS, CSL-JSON); an unknown
    format name raises ValueError (the gateway turns it into a 422)."""
    fmt = ExportFormat(fmt)
    if fmt is ExportFormat.markdown:
        content = report.render_markdown().encode()
    elif fmt is ExportFormat.pdf:
        content = to_pdf(report)
    elif fmt is ExportFormat.bibtex:
        content = to_bibtex(report.references).encode()
    elif fmt is ExportFormat.ris:
        content = to_ris(report.references).encode()
    else:
        content = to_csl_json_text(report.references).encode()
    media_type, extension = EXPORT_FORMATS[fmt]
    return Export(content, media_type, extension)
