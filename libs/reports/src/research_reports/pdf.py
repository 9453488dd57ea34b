"""PDF export with fpdf2 (pure Python; no browser, no system renderer).

The PDF is drawn from the structured report, not from its Markdown, so headings, tags,
quotes and references keep their roles. fpdf2's built-in fonts cover Latin-1 only: when a
DejaVu TrueType font is installed (most Linux images) it is embedded and any script renders;
otherwise text is folded to Latin-1 (accents kept, other characters transliterated) rather
than failing the export.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from fpdf import FPDF

from research_reports.model import Report

_DEJAVU_DIRS = (
    Path("/usr/share/fonts/truetype/dejavu"),
    Path("/usr/share/fonts/dejavu"),
    Path("/usr/local/share/fonts"),
)
_FOLD = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u2026": "...",
        "\u2192": "->",
        "\u2264": "<=",
        "\u2265": ">=",
        "\u00b7": "-",
        "\u2212": "-",
    }
)


def _dejavu() -> dict[str, Path] | None:
    for folder in _DEJAVU_DIRS:
        regular = folder / "DejaVuSans.ttf"
        if regular.exists():
            styles = {
                "": regular,
                "B": folder / "DejaVuSans-Bold.ttf",
                "I": folder / "DejaVuSans-Oblique.ttf",
            }
            return {k: (v if v.exists() else regular) for k, v in styles.items()}
    return None


class _ReportPdf(FPDF):
    def __init__(self, title: str) -> None:
        super().__init__(format="A4")
        self.report_title = title
        fonts = _dejavu()
        if fonts:
            for style, path in fonts.items():
                self.add_font("Body", style, str(path))
            self.family, self.unicode = "Body", True
        else:
            self.family, self.unicode = "Helvetica", False
        self.set_auto_page_break(auto=True, margin=18)
        self.set_margins(18, 18, 18)

    def text_for(self, text: str) -> str:
        """Text the current font can draw."""
        if self.unicode:
            return text
        text = text.translate(_FOLD)
        out = []
        for ch in text:
            try:
                ch.encode("latin-1")
                out.append(ch)
            except UnicodeEncodeError:
                out.append(
                    unicodedata.normalize("NFKD", ch).encode("latin-1", "ignore").decode("latin-1")
                    or "?"
                )
        return "".join(out)

    def footer(self) -> None:
        self.set_y(-12)
        self.set_font(self.family, "I", 8)
        self.cell(0, 8, self.text_for(f"{self.report_title} - page {self.page_no()}"), align="C")

    def block(
        self, text: str, *, size: float = 10.5, style: str = "", indent: float = 0, gap: float = 1.5
    ) -> None:
        self.set_font(self.family, style, size)
        self.set_x(self.l_margin + indent)
        self.multi_cell(
            self.epw - indent, size * 0.5, self.text_for(text), new_x="LMARGIN", new_y="NEXT"
        )
        self.ln(gap)


def to_pdf(report: Report) -> bytes:
    """The report as PDF bytes: title, numbered sections, tagged findings with their quotes,
    then the References."""
    pdf = _ReportPdf(report.title)
    pdf.set_title(pdf.text_for(report.title))
    pdf.set_creator("research-engine")
    pdf.add_page()
    pdf.block(report.title, size=17, style="B", gap=4)
    for index, section in enumerate(report.sections, start=1):
        pdf.block(f"{index}. {section.title}", size=13.5, style="B", gap=2)
        for paragraph in (p.strip() for p in section.body.split("\n\n")):
            if paragraph:
                pdf.block(paragraph.replace("**", ""))
        current_group: str | None = None
        for finding in section.findings:
            if finding.group and finding.group != current_group:
                current_group = finding.group
                pdf.block(finding.group, size=11.5, style="B")
            rendered = finding.render().splitlines()[0].removeprefix("- ").replace("**", "")
            pdf.block("- " + rendered, indent=3, gap=0.5)
            for quote in finding.quotes:
                pdf.block(
                    f'"{quote.text.strip()}" [{quote.reference_id}]',
                    size=9.5,
                    style="I",
                    indent=9,
                    gap=0.5,
                )
            pdf.ln(1)
    if report.references:
        pdf.block(f"{len(report.sections) + 1}. References", size=13.5, style="B", gap=2)
        for reference in sorted(report.references, key=lambda r: r.id):
            pdf.block(reference.render().replace("*", "").replace("`", ""), size=9.5, gap=1)
    return bytes(pdf.output())
