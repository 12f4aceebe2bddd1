"""Formulas drawn on problem cards (issue 53, item 2): a card is built from the problem's
stored HTML, each formula the site's own SVG inline where it stood, never its spoken alt
(«дробь: числитель: …»). Real problem blocks of the site (tests/fixtures/sdamgia), their
formulas served from 127.0.0.1 as the site serves them (SVG that says it is a PNG)."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from mcp import Client
from pytest_httpserver import HTTPServer

from anki_bridge.problem_cards import card_html, variant_package_build
from core.identity import stdio_caller
from core.mcp_server import build_server
from problems.models import Problem, Variant
from problems.parsing import parse_problem_block
from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.anki_bridge.conftest import png_bytes
from tests.anki_bridge.test_packages import anki_import
from tests.conftest import text_of

pytestmark = pytest.mark.django_db(transaction=True)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sdamgia"
SITE = "https://ege.sdamgia.ru"
SPOKEN = ("дробь", "числитель", "знаменатель", "конец дроби", "корень из", "косинус")
PROBLEMS = ("27265", "27340")  # 3 formulas (a fraction among them) / 1 plain, 1 spoken


def _blocks() -> dict[str, str]:
    items = json.loads((FIXTURES / "math-ege_type1_problem_blocks_2023-01.json").read_text())
    blocks = {str(item["problem_id"]): item["block_html"] for item in items["items"]}
    blocks["27340"] = (FIXTURES / "math-ege_problem_27340_block_2023-01.html").read_text()
    return blocks


@dataclass
class Site:
    served: dict[str, bytes]  # URL path → the bytes served
    formulas: dict[str, list[str]]  # problem id → its condition's formula paths, in order
    solution_formulas: dict[str, list[str]]


def _stand_in(httpserver: HTTPServer, *, serve_formulas: bool) -> Site:
    """PROBLEMS stored as parsed from the site's blocks, their addresses on `httpserver`;
    each formula an SVG of its own colour (told apart by its bytes)."""
    base = httpserver.url_for("/").rstrip("/")
    site = Site(served={}, formulas={}, solution_formulas={})
    blocks = _blocks()
    for pid in PROBLEMS:
        parsed = parse_problem_block(blocks[pid], base_url=base + "/")
        fields = {
            name: getattr(parsed, name).replace(SITE, base)
            for name in ("condition_text", "condition_html", "solution_text", "solution_html")
        }
        site.formulas[pid] = [u.removeprefix(SITE) for u in parsed.formulas]
        site.solution_formulas[pid] = [
            u.removeprefix(SITE)
            for u in re.findall(r'src="([^"]+/formula/[^"]+)"', parsed.solution_html)
        ]
        for path in [*site.formulas[pid], *site.solution_formulas[pid]]:
            template = FIXTURES / "svg" / "formula_fraction.svg"
            colour = f"#{len(site.served) + 1:06x}".encode()
            if serve_formulas:
                site.served[path] = template.read_bytes().replace(b"#000000", colour)
        for figure in parsed.figures:
            site.served[figure.removeprefix(base)] = png_bytes(300, 200, "blue")
        Problem.objects.create(
            subject="math", exam="ege", problem_id=pid, type_number="1",
            answer=parsed.answer, figures=[u.replace(SITE, base) for u in parsed.figures],
            formulas=parsed.formulas, solution_kind=parsed.solution_kind,
            fetched_at=timezone.now(), **fields,
        )  # fmt: skip

    def respond(request: Any) -> Any:
        from werkzeug import Response

        body = site.served.get(request.full_path.rstrip("?")) or site.served.get(request.path)
        if body is None:
            return Response("no such file", status=404)
        return Response(body, content_type="image/png")  # the site's word, not the truth

    httpserver.expect_request(re.compile(".*")).respond_with_handler(respond)
    return site


@pytest.fixture
def site(settings, httpserver: HTTPServer) -> Site:  # type: ignore[no-untyped-def]
    settings.ANKI_IMAGE_ALLOW_PRIVATE = True  # the stand-in site is on 127.0.0.1
    return _stand_in(httpserver, serve_formulas=True)


@pytest.fixture
def silent_site(settings, httpserver: HTTPServer) -> Site:  # type: ignore[no-untyped-def]
    """The same problems, their formulas not served (404)."""
    settings.ANKI_IMAGE_ALLOW_PRIVATE = True
    return _stand_in(httpserver, serve_formulas=False)


async def _add(problems: list[str]) -> dict[str, Any]:
    async with Client(build_server(["anki_bridge"]), read_timeout_seconds=60) as c:
        result = await c.call_tool(
            "anki.add_problems", {"problems": [{"subject": "math", "id": p} for p in problems]}
        )
    assert not result.is_error, text_of(result)
    data: dict[str, Any] = json.loads(text_of(result))
    return data


def _formula_srcs(value: str) -> list[str]:
    return re.findall(r'<img src="(sdamgia-formula-[^"]+\.svg)"', value)


def _site_name(media_name: str) -> str:
    """`sdamgia-formula-<site's name>-<digest>.svg` → the site's name."""
    return media_name.removeprefix("sdamgia-formula-").rsplit("-", 1)[0]


def test_a_card_draws_each_formula_as_the_site_s_svg_in_order(anki: FakeAnki, site: Site) -> None:
    data = asyncio.run(_add(list(PROBLEMS)))
    assert [d["status"] for d in data["details"]] == ["ok", "ok"]
    for detail in data["details"]:  # an SVG is stored as it is, with nothing to warn of
        assert not any("image_not_resized" in w for w in detail.get("warnings") or [])
    media = anki.media_files()
    by_id = {n["fields"]["Sources"].rsplit("=", 1)[-1]: n["fields"] for n in anki.notes()}
    for pid in PROBLEMS:
        fields = by_id[pid]
        for spoken in SPOKEN:
            assert spoken not in fields["Prompt"].lower(), (pid, spoken)
            assert spoken not in fields["Response"].lower(), (pid, spoken)
        for field, paths in (
            ("Prompt", site.formulas[pid]),
            ("Response", site.solution_formulas[pid]),
        ):
            srcs = _formula_srcs(fields[field])
            wanted = [p.rsplit("/", 1)[-1].removesuffix(".svg") for p in paths]
            assert [_site_name(s) for s in srcs] == wanted, (pid, field)
            for src, path in zip(srcs, paths, strict=True):
                assert media[src] == site.served[path]  # the site's own drawing, unchanged
        assert "sdamgia.ru" not in fields["Prompt"] + fields["Response"]
        assert "127.0.0.1" not in fields["Prompt"] + fields["Response"]
        assert re.search(r'src="sdamgia-ege-math-\d+-1-[0-9a-f]{16}\.jpg"', fields["Prompt"])
    # text, italics and the plain formula's place kept: «… <i>BC</i> = 8. Найдите <img …>»
    assert re.search(
        r"<i>BC</i>\s*=\s*8\. Найдите <img src=\"sdamgia-formula-", by_id["27340"]["Prompt"]
    )


def test_a_formula_the_site_does_not_give_leaves_its_plain_alt_never_spoken_words(
    anki: FakeAnki, silent_site: Site
) -> None:
    data = asyncio.run(_add(["27340"]))
    (detail,) = data["details"]
    assert detail["status"] == "ok"
    assert len([w for w in detail["warnings"] if "404" in w]) == 2, detail  # said, not hidden
    (note,) = anki.notes()
    prompt, response = note["fields"]["Prompt"], note["fields"]["Response"]
    assert "sdamgia-formula-" not in prompt + response  # no broken image
    assert "8. Найдите cos A.\n" in prompt  # «косинус A.»: plain, written as mathematics
    assert "[формула недоступна]" in response  # «… дробь: числитель: CH …»: never spoken
    for spoken in SPOKEN:
        assert spoken not in (prompt + response).lower(), spoken


def test_the_site_s_html_is_sanitized() -> None:
    stored = (
        "<script>alert(1)</script><style>p{color:red}</style>"
        '<p onclick="steal()" class="left_margin" style="x">Найдите <b>x</b><sup>2</sup> '
        '<a href="https://ege.sdamgia.ru/problem?id=1">задание 1</a>'
        '<img src="https://ege.sdamgia.ru/get_file?id=5" onerror="steal()">'
        '<img class="tex" alt="x = 5" onload="steal()" src="https://ege.sdamgia.ru/formula/svg/'
        'ab/abc.svg"></p><p>Вторая строка</p>'
    )
    drawn, specs = card_html(stored, field="Prompt")
    assert drawn == (
        "Найдите <b>x</b><sup>2</sup> задание 1"
        '<img src="sdamgia-formula-abc.svg" alt="x = 5" style="vertical-align:middle">'
        "<br>Вторая строка"
    )
    (spec,) = specs
    assert spec.source_url == "https://ege.sdamgia.ru/formula/svg/ab/abc.svg"
    assert (spec.filename, spec.target_field, spec.stand_in) == (
        "sdamgia-formula-abc.svg", "Prompt", "x = 5",
    )  # fmt: skip


def test_a_variant_s_package_holds_the_formulas_as_media(site: Site, tmp_path: Path) -> None:
    owner = get_user_model().objects.get(pk=stdio_caller().pk)
    variant = Variant.objects.create(
        owner=owner, subject="math", exam="ege", tasks={"1": 2}, seed=1,
        problem_ids=list(PROBLEMS),
    )  # fmt: skip
    built = variant_package_build(user_id=owner.pk, variant=variant.public_id)
    imported = anki_import(built.data, tmp_path / "anki")
    assert len(imported.notes) == 2
    for pid, (prompt, response) in zip(
        PROBLEMS, [n["fields"][:2] for n in imported.notes.values()], strict=True
    ):
        srcs = _formula_srcs(prompt) + _formula_srcs(response)
        paths = site.formulas[pid] + site.solution_formulas[pid]
        assert len(srcs) == len(paths) > 0
        for src, path in zip(srcs, paths, strict=True):
            assert imported.media[src] == site.served[path]
        for spoken in SPOKEN:
            assert spoken not in (prompt + response).lower(), spoken
