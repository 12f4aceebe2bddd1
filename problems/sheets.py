"""A variant as a printable sheet (issue 30, item 2): a PDF stored through Django's
storage (S3 in production).

What the sheet holds and how it is drawn — the header, the conditions with their formulas
and figures drawn, the answer key and the solutions on pages of their own, the page
footer — is `problems.sheet_pdf` (issue 51, items 1–3).
"""

from __future__ import annotations

from problems.models import Variant
from problems.sheet_pdf import variant_pdf_bytes
from problems.sheet_store import StoredSheet, sheet_store

__all__ = ["variant_pdf", "variant_pdf_bytes", "variant_sheet"]


def variant_pdf(*, variant: Variant, with_solutions: bool = False) -> str:
    """The sheet of `variant` stored under a name of its content; the storage name."""
    return variant_sheet(variant=variant, with_solutions=with_solutions).name


def variant_sheet(*, variant: Variant, with_solutions: bool = False) -> StoredSheet:
    """The sheet of `variant` rendered and stored, safe under concurrent prints (one file
    per variant, options and content: `problems.sheet_store`); its name and its bytes."""
    pdf = variant_pdf_bytes(variant=variant, with_solutions=with_solutions)
    stem = f"variant-{variant.public_id}{'-solutions' if with_solutions else ''}"
    return sheet_store(pdf, stem=stem)
