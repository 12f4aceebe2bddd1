"""A variant as a printable sheet (issue 30, item 2): a PDF stored through Django's
storage (S3 in production).

What the sheet holds and how it is drawn — the header, the conditions with their formulas
and figures drawn, the answer key and the solutions on pages of their own, the page
footer, copies for a class in orders of their own — is `problems.sheet_pdf` (issue 51,
items 1–3); where it is kept, and for how long, `problems.sheet_store`.
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache
from django.core.files.storage import default_storage

from core.exceptions import InvalidInput
from problems.models import Problem, Variant
from problems.sheet_copies import MAX_COPIES, SHEET_PARTS, SheetPart
from problems.sheet_pdf import variant_pdf_bytes
from problems.sheet_store import StoredSheet, sheet_store, sheets_expire

__all__ = ["sheets_expire", "variant_pdf", "variant_pdf_bytes", "variant_sheet"]

# A sheet printed is served again as stored for this long (seconds) when asked with the
# same options and the same stored problems: a large one takes half a minute to draw, and
# the link a print returns is read at once. Figures are fetched while drawing: an hour
# bounds how long one the site could not give stays out.
REUSED_FOR = 3600
DRAWING = "1"  # raised when the drawing changes: sheets of older drawings are drawn again


def variant_pdf(
    *, variant: Variant, with_solutions: bool = False, copies: int = 1, part: SheetPart = "all"
) -> str:
    """The sheet of `variant` stored under a name of its content; the storage name."""
    return variant_sheet(
        variant=variant, with_solutions=with_solutions, copies=copies, part=part
    ).name


def variant_sheet(
    *, variant: Variant, with_solutions: bool = False, copies: int = 1, part: SheetPart = "all"
) -> StoredSheet:
    """The sheet of `variant` rendered and stored, safe under concurrent prints (one file
    per variant, options and content: `problems.sheet_store`); its name and its bytes.
    `copies` (1…MAX_COPIES) and `part` as `variant_pdf_bytes` takes them."""
    if not 1 <= copies <= MAX_COPIES:
        raise InvalidInput(f"copies must be from 1 to {MAX_COPIES}", field="copies")
    if part not in SHEET_PARTS:
        raise InvalidInput(f"part must be one of {', '.join(SHEET_PARTS)}", field="part")
    stem = sheet_stem(variant.public_id, with_solutions, copies, part)
    key = f"sdamgia:sheet:{stem}:{_content_version(variant)}"
    printed = cache.get(key)  # the same sheet printed a moment ago (its link read next)
    if printed and default_storage.exists(printed):
        with default_storage.open(printed, "rb") as stored:
            return sheet_store(stored.read(), stem=stem)  # its time renewed if a link outlives it
    pdf = variant_pdf_bytes(
        variant=variant, with_solutions=with_solutions, copies=copies, part=part
    )
    sheet = sheet_store(pdf, stem=stem)
    cache.set(key, sheet.name, REUSED_FOR)
    return sheet


def _content_version(variant: Variant) -> str:
    """What a sheet of `variant` is drawn from: its problems as stored (a problem fetched
    again, or edited, draws another sheet) and the drawing's own version."""
    drawn = hashlib.sha256(DRAWING.encode())
    rows = Problem.objects.filter(
        subject=variant.subject, exam=variant.exam, problem_id__in=variant.problem_ids
    ).order_by("problem_id")
    fields = ("problem_id", "fetched_at", "answer", "condition_html", "solution_html", "figures")
    for row in rows.values_list(*fields):  # an edit in the admin changes no fetched_at
        drawn.update(repr(row).encode())
    return drawn.hexdigest()[:24]


def sheet_stem(public_id: str, with_solutions: bool, copies: int, part: SheetPart) -> str:
    """`variant-{id}[-solutions][-{n}copies][-sheets|-key]`: what a sheet's file is
    called before its content key."""
    solutions = with_solutions and part != "sheets"
    return (
        f"variant-{public_id}{'-solutions' if solutions else ''}"
        f"{f'-{copies}copies' if copies > 1 else ''}{'' if part == 'all' else f'-{part}'}"
    )
