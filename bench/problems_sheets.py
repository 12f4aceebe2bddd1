"""Printed variants (issue 51): how long a sheet takes to print and what its pages hold,
on the real problem blocks (tests/fixtures/sdamgia) with their figures and formula images
served as the site serves them — SVG under names and a type that say PNG — by a local
stand-in on 127.0.0.1. With --pages DIR every page of every sheet is saved as a PNG for a
human to look at, and the table names the files.

    .venv/bin/python bench/problems_sheets.py [--problems N] [--pages DIR]

The SVG bytes are the fixtures' (tests/fixtures/sdamgia/svg, written to the site's shape:
the shared fixtures hold the SVGs' addresses only); the problem blocks, their text and
their formula markup are the site's. Uses a temporary SQLite database and media directory.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TMP = tempfile.mkdtemp(prefix="bench-sheets-")
os.environ.setdefault("DATABASE_URL", f"sqlite:///{TMP}/bench.sqlite3")
os.environ["DJANGO_MEDIA_ROOT"] = f"{TMP}/media"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_LOG_LEVEL", "WARNING")
FIXTURES = ROOT / "tests" / "fixtures" / "sdamgia"
SITE_FORMULAS = "https://ege.sdamgia.ru"  # where the blocks' formula images live

import django  # noqa: E402

django.setup()

import pypdfium2 as pdfium  # noqa: E402
import pypdfium2.raw as pdfium_c  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.common import print_table  # noqa: E402
from problems.models import Problem, Variant  # noqa: E402
from problems.parsing import parse_problem_block  # noqa: E402
from problems.sheet_copies import SheetPart  # noqa: E402
from problems.sheets import variant_sheet  # noqa: E402

# name, with_solutions, copies, part
PRINTS: list[tuple[str, bool, int, SheetPart]] = [
    ("one copy", False, 1, "all"),
    ("with solutions", True, 1, "all"),
    ("4 copies", False, 4, "all"),
    ("4 copies: sheets", False, 4, "sheets"),
    ("4 copies: key", False, 4, "key"),
]
SPOKEN = ("дробь", "числитель", "корень из", "[рисунок:", "/formula/", "get_file")


class Site(BaseHTTPRequestHandler):
    """Formula images and figures, as SVG, whatever their names say."""

    def do_GET(self) -> None:
        if "/formula/" in self.path:
            kind = ("inline", "fraction")[hashlib.sha256(self.path.encode()).digest()[0] % 2]
            body = (FIXTURES / "svg" / f"formula_{kind}.svg").read_bytes()
        elif "get_file" in self.path:
            body = (FIXTURES / "svg" / "figure_triangle.svg").read_bytes()
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "image/png")  # the site's word, not the truth
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


def bank(base: str, count: int) -> Variant:
    """`count` real problems, those with figures and formulas first, stored with their
    images on the stand-in; a variant of them."""
    items = json.loads((FIXTURES / "math-ege_type1_problem_blocks_2023-01.json").read_text())
    blocks = {str(item["problem_id"]): item["block_html"] for item in items["items"]}
    parsed = {pid: parse_problem_block(html, base_url=base) for pid, html in blocks.items()}
    chosen = sorted(parsed, key=lambda pid: (-len(parsed[pid].figures), -len(parsed[pid].formulas)))
    for pid in chosen[:count]:
        problem = parsed[pid]

        def here(text: str) -> str:
            return text.replace(SITE_FORMULAS, base.rstrip("/"))

        Problem.objects.update_or_create(
            subject="math", exam="ege", problem_id=pid,
            defaults={
                "type_number": "1", "answer": problem.answer,
                "figures": [here(url) for url in problem.figures],
                "formulas": [here(url) for url in problem.formulas],
                "solution_kind": problem.solution_kind, "fetched_at": timezone.now(),
                **{name: here(getattr(problem, name)) for name in (
                    "condition_text", "condition_html", "solution_text", "solution_html")},
            },
        )  # fmt: skip
    owner, _ = get_user_model().objects.get_or_create(username="teacher")
    return Variant.objects.create(
        owner=owner, subject="math", exam="ege", tasks={"1": count}, seed=1,
        problem_ids=chosen[:count],
    )  # fmt: skip


def drawn(document: pdfium.PdfDocument) -> tuple[int, int]:
    """Vector path objects and image objects on every page."""
    paths = images = 0
    for page in document:
        for obj in page.get_objects():
            paths += obj.type == pdfium_c.FPDF_PAGEOBJ_PATH
            images += obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE
    return paths, images


def print_one(
    variant: Variant, name: str, solutions: bool, copies: int, part: SheetPart, pages: Path | None
) -> tuple[list[str], list[str]]:
    """The row of one print, and the page images saved."""
    started = time.perf_counter()
    sheet = variant_sheet(variant=variant, with_solutions=solutions, copies=copies, part=part)
    took = time.perf_counter() - started
    document = pdfium.PdfDocument(sheet.data)
    text = " ".join(page.get_textpage().get_text_range() for page in document)
    left = [word for word in SPOKEN if word in text]
    paths, images = drawn(document)
    saved: list[str] = []
    if pages is not None:
        folder = pages / re.sub(r"[^a-z0-9]+", "-", name).strip("-")
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("page-*.png"):  # a run before, of other page counts
            old.unlink()
        for number, page in enumerate(document, start=1):
            path = folder / f"page-{number}.png"
            page.render(scale=1.5).to_pil().save(path)
            saved.append(str(path))
    row = [
        name,
        str(len(document)),
        f"{len(sheet.data) / 1024:.0f} KiB",
        f"{took * 1000:.0f} ms",
        str(paths),
        str(images),
        str(text.count("[рисунок недоступен]")),
        ", ".join(left) or "none",
        f"{saved[0]} … {Path(saved[-1]).name}" if saved else "-",
    ]
    return row, saved


def main() -> None:
    parser = argparse.ArgumentParser(description="Printed variants benchmark")
    parser.add_argument("--problems", type=int, default=12, help="problems in the variant")
    parser.add_argument("--pages", type=Path, help="save each page as PNG under this directory")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    settings.SDAMGIA_IMAGE_ALLOW_PRIVATE = True  # the stand-in is on 127.0.0.1
    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    variant = bank(f"http://127.0.0.1:{server.server_address[1]}/", args.problems)
    pages = args.pages.resolve() if args.pages else None
    rows, saved = [], []
    for name, solutions, copies, part in PRINTS:
        row, files = print_one(variant, name, solutions, copies, part, pages)
        rows.append(row)
        saved += files
    server.shutdown()
    print(f"Printed variants: {args.problems} real problems, figures and formulas as SVG\n")
    print_table(
        ["print", "pages", "size", "time", "paths", "images", "missing", "spoken/URL", "PNG"],
        rows,
    )
    if saved:
        print(f"\n{len(saved)} page images for a reviewer:")
        for path in saved:
            print(f"  {path}")


if __name__ == "__main__":
    main()
