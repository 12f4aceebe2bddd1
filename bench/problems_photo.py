"""Photo → problem benchmark: `sdamgia_search_by_image` on rendered photos of real conditions.

    .venv/bin/python bench/problems_photo.py [--photos 50]

The 172 real problems of ../shared/fixtures/sdamgia are stored; each photo is one of their
conditions set in DejaVu Sans on a page (as a textbook or a screen shows it), then turned
by up to ±2°, blurred, given grain and saved as a JPEG, as a phone's photo is. Each goes
through the MCP tool (the MCP SDK client, in memory) on a local stand-in of the site whose
search matches words. A hit: the first result holds the photographed condition (or one of
the same text). Prints photos, top-1, and the median OCR and call times. Needs tesseract
with Russian (Debian: tesseract-ocr tesseract-ocr-rus). Temporary SQLite unless
DATABASE_URL is set.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TMP = tempfile.mkdtemp(prefix="bench-photo-")
os.environ.setdefault("DATABASE_URL", f"sqlite:///{TMP}/bench.sqlite3")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_LOG_LEVEL", "WARNING")
REAL = ROOT / "tests" / "fixtures" / "sdamgia" / "math-ege_type1_problem_blocks_2023-01.json"

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from mcp import Client  # noqa: E402

from bench.common import print_table  # noqa: E402
from core import ocr  # noqa: E402
from core.mcp_server import build_server  # noqa: E402
from problems.matching import normalize  # noqa: E402
from problems.parsing import parse_problem_block  # noqa: E402
from problems.services import problems_store  # noqa: E402
from problems.subjects import Site  # noqa: E402
from tests.problems.fake_site import FakeSite, serve  # noqa: E402
from tests.problems.photos import photo  # noqa: E402

MATH = Site("math", "ege")
BASE = "https://math-ege.sdamgia.ru"


def timed_ocr() -> list[float]:
    """Wrap core.ocr.image_read to time each OCR run."""
    spent: list[float] = []
    original = ocr.image_read

    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - started)

    import problems.photo

    problems.photo.image_read = wrapper  # type: ignore[assignment]
    return spent


async def search_all(photos: list[bytes]) -> list[tuple[dict[str, object], float]]:
    results = []
    async with Client(build_server(["problems"]), read_timeout_seconds=300) as client:
        for data in photos:
            started = time.perf_counter()
            result = await client.call_tool(
                "sdamgia_search_by_image",
                {
                    "subject": "math",
                    "image_base64": base64.b64encode(data).decode(),
                    "limit": 3,
                    "response_format": "json",
                },
            )
            wall = time.perf_counter() - started
            text = result.content[0].text  # type: ignore[union-attr]
            results.append((json.loads(text) if not result.is_error else {"error": text}, wall))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--photos", type=int, default=50)
    count = parser.parse_args().photos
    if not REAL.exists():
        raise SystemExit(f"{REAL} is absent: the benchmark photographs the real conditions")
    ocr.ocr_check(command=settings.SDAMGIA_TESSERACT_CMD, languages=settings.SDAMGIA_OCR_LANGS)
    call_command("migrate", verbosity=0)
    blocks: dict[str, str] = {}
    for item in json.loads(REAL.read_text(encoding="utf-8"))["items"]:
        blocks.setdefault(str(item["problem_id"]), item["block_html"])
    parsed = [parse_problem_block(html, base_url=BASE) for html in blocks.values()]
    problems_store(site=MATH, parsed=parsed)
    conditions = {p.problem_id: p.condition_text for p in parsed}
    fake = FakeSite(search_engine=True)
    for pid, html in blocks.items():
        fake.add_problem("math-ege", pid, html)
    server, template = serve(fake)
    settings.SDAMGIA_URL_TEMPLATE = template
    settings.SDAMGIA_MIN_INTERVAL = 0

    rng = random.Random(50)
    chosen = rng.sample(sorted(conditions), count)
    photos = [photo(conditions[pid], rng) for pid in chosen]
    ocr_times = timed_ocr()
    results = asyncio.run(search_all(photos))
    server.shutdown()

    hits = 0
    for pid, (data, _) in zip(chosen, results, strict=True):
        matches = data.get("matches") or []
        first = str(matches[0]["id"]) if matches else ""  # type: ignore[index]
        hits += bool(first) and normalize(conditions.get(first, "")) == normalize(conditions[pid])
    walls = [wall for _, wall in results]
    print(f"{count} rendered photos of real conditions; 172 problems stored\n")
    print_table(
        ["photos", "top-1", "top-1 %", "OCR median", "call median", "call p95"],
        [
            [
                str(count),
                str(hits),
                f"{100 * hits / count:.0f}%",
                f"{statistics.median(ocr_times):.2f} s",
                f"{statistics.median(walls):.2f} s",
                f"{sorted(walls)[int(0.95 * (len(walls) - 1))]:.2f} s",
            ]
        ],
    )


if __name__ == "__main__":
    main()
