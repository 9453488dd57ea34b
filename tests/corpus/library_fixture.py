"""The reference-manager exports of `library_exports/` laid out as a researcher's folder: the
export files next to Zotero's `files/` folder, where some attached PDFs exist and some do not."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.corpus.pdf_builder import write_pdf

EXPORTS = Path(__file__).parent / "library_exports"
ASPIRIN_DOI = "10.1016/s0140-6736(18)31924-x"
VITAMIN_D_DOI = "10.1001/jama.2020.1234"
CRISPR_DOI = "10.1016/j.cell.2013.02.022"
# Words only the attached PDFs hold: finding them proves the PDF's text was ingested.
ASPIRIN_PDF_PHRASE = (
    "Platelet aggregation was measured with light transmission aggregometry in 412 volunteers."
)
VITAMIN_D_PDF_PHRASE = "Serum calcidiol was assayed by liquid chromatography tandem mass spectrometry in every participant."


def lay_out_library(folder: Path) -> Path:
    """Copy the exports into `folder` and write the PDFs that exist (the others stay missing)."""
    for export in EXPORTS.iterdir():
        if export.is_file():
            shutil.copy(export, folder / export.name)
    aspirin = folder / "files" / "12" / "Ruiz et al. - 2018 - Low-dose aspirin.pdf"
    aspirin.parent.mkdir(parents=True)
    write_pdf(
        aspirin,
        [
            "Low-dose aspirin and myocardial infarction in older adults",
            "Ana Ruiz, Bo Chen, Jurgen Muller",
            "Methods",
            ASPIRIN_PDF_PHRASE,
            "Results",
            "Aspirin lowered the rate of a first myocardial infarction compared with placebo.",
            "References",
            "1. An unrelated reference that must not be indexed.",
        ],
    )
    vitamin_d = folder / "files" / "7" / "Ng et al. - 2020 - Vitamin D supplementation.pdf"
    vitamin_d.parent.mkdir(parents=True)
    write_pdf(
        vitamin_d,
        [
            "Vitamin D supplementation and hip fractures",
            "Methods",
            VITAMIN_D_PDF_PHRASE,
        ],
    )
    return folder
