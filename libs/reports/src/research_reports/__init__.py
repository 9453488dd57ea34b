"""Structured reports shared by the literature-review, claim-verification and source-list modes:
the model and its Markdown, the citation checker, version diffs and exports."""

from research_reports.bibliography import (
    citation_keys,
    split_name,
    to_bibtex,
    to_csl_json,
    to_csl_json_text,
    to_ris,
)
from research_reports.citations import (
    DEFAULT_MIN_OVERLAP,
    CitationCheck,
    CitationIssue,
    IssueKind,
    check_markdown,
    check_report,
)
from research_reports.diff import (
    FindingChange,
    FindingEntry,
    ReferenceEntry,
    ReportDiff,
    diff_findings,
    diff_references,
    diff_reports,
)
from research_reports.exports import EXPORT_FORMATS, Export, ExportFormat, export_report
from research_reports.model import Finding, FindingTag, Quote, Reference, Report, Section
from research_reports.pdf import to_pdf

__all__ = [
    "DEFAULT_MIN_OVERLAP",
    "EXPORT_FORMATS",
    "CitationCheck",
    "CitationIssue",
    "Export",
    "ExportFormat",
    "Finding",
    "FindingChange",
    "FindingEntry",
    "FindingTag",
    "IssueKind",
    "Quote",
    "Reference",
    "ReferenceEntry",
    "Report",
    "ReportDiff",
    "Section",
    "check_markdown",
    "check_report",
    "citation_keys",
    "diff_findings",
    "diff_references",
    "diff_reports",
    "export_report",
    "split_name",
    "to_bibtex",
    "to_csl_json",
    "to_csl_json_text",
    "to_pdf",
    "to_ris",
]
