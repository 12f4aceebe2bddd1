"""What a cached read costs the hub in SQL: run inside the hub's environment by
`bench/mcp_overhead.py`, it stores the reads' data, then prints (as JSON) the SQL statements
the hub runs for each read and the text it answers, for the floor server to replay.

    python bench/cached_calls.py OUT.json [NORM_PAGES]

The reads: `sdamgia_get_problem` of a stored, fresh problem (the real block of problem
27340) and `normagpt_search_norms`: with NORM_PAGES, a question of the benchmark's corpus
of norm documents (`bench/norm_corpus.py`: real norm vocabulary, clauses that compete) of
that many pages, with its keywords as a planner would search; without it (or 0), the six
sample pages of `normagpt_demo`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from normagpt import mcp_tools as norms  # noqa: E402
from problems import mcp_tools as bank  # noqa: E402
from problems import services  # noqa: E402
from problems.client import site_base_url  # noqa: E402
from problems.parsing import parse_problem_page  # noqa: E402
from problems.subjects import site_resolve  # noqa: E402

READS: dict[str, tuple[Any, dict[str, Any]]] = {
    "sdamgia_get_problem": (
        bank.get_problem,
        {"subject": "math", "problem_id": "27340", "exam": "ege"},
    ),
    "normagpt_search_norms": (norms.search_norms, {"keywords": ["защитный слой бетона"]}),
}


def prepare(norm_pages: int = 0) -> None:
    site = site_resolve(subject="math", exam="ege")
    page = ROOT / "tests" / "fixtures" / "sdamgia" / "math-ege_problem_27340_block_2023-01.html"
    parsed = parse_problem_page(page.read_text(encoding="utf-8"), base_url=site_base_url(site))
    services.problem_store(site=site, parsed=parsed)
    if not norm_pages:
        call_command("normagpt_demo", "--if-empty", verbosity=0)
        return
    from bench.norm_load import norms_load

    question = norms_load(norm_pages, fresh=True).questions()[0]
    arguments = {"keywords": question.keywords, "expected_documents": question.expected_documents}
    READS["normagpt_search_norms"] = (norms.search_norms, arguments)


def capture() -> dict[str, dict[str, Any]]:
    captured = {}
    for name, (tool, arguments) in READS.items():
        tool(**arguments)  # warm: what a first call alone does is not the read's cost
        with CaptureQueriesContext(connection) as queries:
            result = tool(**arguments)
        captured[name] = {
            "arguments": arguments,
            "sql": [query["sql"] for query in queries.captured_queries],
            "text": "".join(getattr(block, "text", "") for block in result.content),
        }
    return captured


if __name__ == "__main__":
    prepare(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    Path(sys.argv[1]).write_text(json.dumps(capture(), ensure_ascii=False), encoding="utf-8")
