"""A variant as a printable sheet (issue 30, item 2): the PDF's text, read back with
pdfium, holds every condition in order, each figure or its address, and after them the
answer key (and the solutions when asked). Printed over REST and from the admin."""

from __future__ import annotations

import ctypes
import io
import json
import os
import re
from pathlib import Path
from unittest import mock

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.test import Client
from django.utils import timezone
from PIL import Image, ImageDraw
from pytest_httpserver import HTTPServer
from rest_framework.test import APIClient

from problems.models import Problem, Variant
from problems.parsing import parse_problem_block
from problems.sheets import variant_pdf_bytes

pytestmark = pytest.mark.django_db

CONDITIONS = {
    "27340": "В треугольнике ABC угол C равен 90°, высота CH равна 4, BC = 8. Найдите косинус A.",
    "27341": "Найдите площадь трапеции, основания которой равны 6 и 10, а высота равна 5.",
    "27342": "Вероятность того, что новый чайник прослужит больше года, равна 0,97.",
}
ANSWERS = {"27340": "0,5", "27341": "40", "27342": "0,97"}


def pdf_text(data: bytes) -> str:
    document = pdfium.PdfDocument(data)
    return "\n".join(" ".join(page.get_textpage().get_text_range().split()) for page in document)


@pytest.fixture
def variant(httpserver: HTTPServer, settings, tmp_path: Path) -> Variant:  # type: ignore[no-untyped-def]
    settings.SDAMGIA_IMAGE_ALLOW_PRIVATE = True  # the figure is served on 127.0.0.1
    settings.MEDIA_ROOT = str(tmp_path)
    png = io.BytesIO()
    Image.new("RGB", (300, 200), "white").save(png, "PNG")
    httpserver.expect_request("/get_file").respond_with_data(
        png.getvalue(), content_type="image/png"
    )
    figures = {
        "27340": [httpserver.url_for("/get_file?id=1")],
        "27341": [httpserver.url_for("/missing.png")],  # 500: named instead
        "27342": [],
    }
    for pid, condition in CONDITIONS.items():
        Problem.objects.create(
            subject="math", exam="ege", problem_id=pid, type_number="1",
            condition_text=condition, answer=ANSWERS[pid], figures=figures[pid],
            solution_text=f"Решение задачи {pid}: ответ {ANSWERS[pid]}.",
            fetched_at=timezone.now(),
        )  # fmt: skip
    owner = get_user_model().objects.create_user(username="teacher", password="x")
    return Variant.objects.create(
        owner=owner, subject="math", exam="ege", tasks={"1": 3}, seed=1,
        problem_ids=["27342", "27340", "27341"],
    )  # fmt: skip


def test_the_sheet_holds_the_conditions_then_the_answer_key(variant: Variant) -> None:
    text = pdf_text(variant_pdf_bytes(variant=variant))
    positions = [text.index(" ".join(CONDITIONS[pid].split()[:6])) for pid in variant.problem_ids]
    assert positions == sorted(positions)  # in the variant's order
    key = text.index("Ответы")
    assert key > positions[-1]
    after = text[key:]
    for number, pid in enumerate(variant.problem_ids, start=1):
        assert f"{number} {pid} {ANSWERS[pid]}" in after, after
    assert text.count("Ответ:") == 3  # an answer box per problem
    assert "[рисунок недоступен]" in text  # the figure that could not be fetched is named
    assert "missing.png" not in text  # as missing, never by its address
    assert "get_file" not in text  # the one fetched is drawn, not named
    assert "Решения" not in text
    assert "Решение задачи" not in text


def test_with_solutions_they_follow_the_key(variant: Variant) -> None:
    text = pdf_text(variant_pdf_bytes(variant=variant, with_solutions=True))
    key, solutions = text.index("Ответы"), text.index("Решения")
    assert key < solutions
    for pid in variant.problem_ids:
        assert text.index(f"Решение задачи {pid}") > solutions


def test_printed_over_rest_by_its_owner_and_from_the_admin(variant: Variant, admin_client) -> None:  # type: ignore[no-untyped-def]
    owner, other = APIClient(), APIClient()
    owner.force_authenticate(variant.owner)
    other.force_authenticate(get_user_model().objects.create_user(username="other"))
    printed = owner.post(f"/api/problems/variants/{variant.public_id}/pdf/?solutions=1")
    assert printed.status_code == 200, printed.content
    link = printed.json()["url"]
    assert link.startswith("http://testserver/media/sheets/?t=")
    # the link itself is the key: anyone holding it downloads the sheet, on any web process
    downloaded = Client().get(link.removeprefix("http://testserver"))
    assert downloaded.status_code == 200
    assert downloaded["Content-Type"] == "application/pdf"
    assert "Решения" in pdf_text(b"".join(downloaded.streaming_content))
    assert other.post(f"/api/problems/variants/{variant.public_id}/pdf/").status_code == 404
    unsure = owner.post(f"/api/problems/variants/{variant.public_id}/pdf/?solutions=maybe")
    assert unsure.status_code == 400  # not read as «no»
    assert unsure.json()["extra"]["field"] == "solutions"
    response = admin_client.post(
        "/admin/problems/variant/",
        {"action": "print_sheets", "_selected_action": [variant.pk]},
    )
    assert response["Content-Type"] == "application/pdf"
    assert "Ответы" in pdf_text(response.content)


def test_a_sheet_link_that_is_altered_guessed_or_expired_is_refused(
    variant: Variant, settings
) -> None:  # type: ignore[no-untyped-def]
    from django.core import signing

    from problems.sheet_links import sheet_link
    from problems.sheets import variant_pdf

    link = sheet_link(variant_pdf(variant=variant))
    assert Client().get(link).status_code == 200
    assert Client().head(link).status_code == 200  # link checkers ask HEAD
    token = link.split("t=", 1)[1]
    other_name = link.replace("variant-", "variant-x")  # another file, the same signature
    guessed = f"/media/sheets/?t=sheets/variant-{variant.public_id}.pdf"
    for refused in (other_name, guessed, "/media/sheets/", link[:-3]):
        assert Client().get(refused).status_code == 404, refused
    assert token not in default_storage.listdir("sheets")[1]
    settings.SDAMGIA_SHEET_LINK_HOURS = 1
    later = signing.time.time() + 3601  # type: ignore[attr-defined]
    with mock.patch("django.core.signing.time.time", return_value=later):
        expired = Client().get(link)
    assert expired.status_code == 404
    assert "expired" in expired.content.decode()


# Issue 51, items 1–3: real problem blocks of the site, their figures and formula images
# served as the site serves them (SVG under names and types that say PNG), printed.

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sdamgia"
SVG = FIXTURES / "svg"
SITE_FORMULAS = "https://ege.sdamgia.ru"


def _blocks() -> dict[str, str]:
    items = json.loads((FIXTURES / "math-ege_type1_problem_blocks_2023-01.json").read_text())
    blocks = {str(item["problem_id"]): item["block_html"] for item in items["items"]}
    blocks["27340"] = (FIXTURES / "math-ege_problem_27340_block_2023-01.html").read_text()
    return blocks


def _colour(index: int) -> str:
    return (
        f"#{(37 * index + 11) % 256:02x}{(91 * index + 5) % 256:02x}{(index * 13) % 200 + 40:02x}"
    )


def _path_colours(document: pdfium.PdfDocument) -> tuple[set[str], int, list[str]]:
    """The fill and stroke colours of every path object, the number of image objects, and
    the objects that stick out of the page."""
    colours: set[str] = set()
    images = 0
    outside: list[str] = []
    for page in document:
        width, height = page.get_size()
        for obj in page.get_objects():
            left, bottom, right, top = obj.get_bounds()
            if left < -1 or bottom < -1 or right > width + 1 or top > height + 1:
                outside.append(f"{obj.type} {obj.get_bounds()}")
            if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE:
                images += 1
            if obj.type != pdfium_c.FPDF_PAGEOBJ_PATH:
                continue
            for getter in (pdfium_c.FPDFPageObj_GetFillColor, pdfium_c.FPDFPageObj_GetStrokeColor):
                r, g, b, a = (ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint())
                if getter(obj.raw, r, g, b, a):
                    colours.add(f"#{r.value:02x}{g.value:02x}{b.value:02x}")
    return colours, images, outside


@pytest.fixture
def site_variant(httpserver: HTTPServer, settings, tmp_path: Path):  # type: ignore[no-untyped-def]
    """27340 and 27244 with SVG figures, 27357 with a PNG figure, 27761 with a figure the
    site cannot give; each formula image in a colour of its own, to be told apart."""
    settings.SDAMGIA_IMAGE_ALLOW_PRIVATE = True
    settings.MEDIA_ROOT = str(tmp_path)
    base = httpserver.url_for("/")
    blocks = _blocks()
    expected: dict[str, str] = {}  # URL path → the colour it is drawn in
    served: dict[str, bytes] = {}
    for pid in ("27340", "27244", "27357", "27761"):
        parsed = parse_problem_block(blocks[pid], base_url=base)
        fields = {
            name: getattr(parsed, name).replace(SITE_FORMULAS, base.rstrip("/"))
            for name in ("condition_text", "condition_html", "solution_text", "solution_html")
        }
        for url in [
            *parsed.formulas,
            *re.findall(r'src="([^"]+/formula/[^"]+)"', parsed.solution_html),
        ]:
            path = url.removeprefix(SITE_FORMULAS)
            if path in expected:
                continue
            fraction = "дробь" in blocks[pid].split(path, 1)[0][-400:] or len(expected) % 2
            template = SVG / ("formula_fraction.svg" if fraction else "formula_inline.svg")
            expected[path] = _colour(len(expected) + 1)
            served[path] = template.read_bytes().replace(b"#000000", expected[path].encode())
        (figure,) = parsed.figures
        path = figure.removeprefix(base.rstrip("/"))
        if pid in ("27340", "27244"):
            expected[path] = _colour(len(expected) + 1)
            served[path] = (
                (SVG / "figure_triangle.svg")
                .read_bytes()
                .replace(b"#000000", expected[path].encode())
            )
        elif pid == "27357":
            png = io.BytesIO()
            raster = Image.new("RGB", (240, 180), "white")
            ImageDraw.Draw(raster).polygon([(20, 160), (220, 160), (80, 20)], outline="black")
            raster.save(png, "PNG")
            served[path] = png.getvalue()
        Problem.objects.create(
            subject="math", exam="ege", problem_id=pid, type_number="1",
            answer=parsed.answer, figures=[url.replace(SITE_FORMULAS, base.rstrip("/")) for url in parsed.figures],
            formulas=parsed.formulas, solution_kind=parsed.solution_kind,
            fetched_at=timezone.now(), **fields,
        )  # fmt: skip

    def respond(request):  # type: ignore[no-untyped-def]
        from werkzeug import Response

        body = served.get(request.full_path.rstrip("?")) or served.get(request.path)
        if body is None:
            return Response("no such file", status=404)
        return Response(body, content_type="image/png")  # the site's word, not the truth

    httpserver.expect_request(re.compile(".*")).respond_with_handler(respond)
    owner = get_user_model().objects.create_user(username="teacher", password="x")
    variant = Variant.objects.create(
        owner=owner, subject="math", exam="ege", tasks={"1": 4}, seed=7,
        problem_ids=["27340", "27244", "27357", "27761"],
    )  # fmt: skip
    return variant, expected


def test_figures_and_formulas_are_drawn_never_named_or_spoken(site_variant) -> None:  # type: ignore[no-untyped-def]
    variant, expected = site_variant
    data = variant_pdf_bytes(variant=variant, with_solutions=True)
    document = pdfium.PdfDocument(data)
    # for a reviewer to look at (not read by the test): SHEET_PAGES=DIR keeps each page's PNG
    if pages := os.environ.get("SHEET_PAGES"):
        Path(pages).mkdir(parents=True, exist_ok=True)
        for number, page in enumerate(document, start=1):
            page.render(scale=1.5).to_pil().save(Path(pages) / f"page-{number}.png")
    text = pdf_text(data)
    assert "[рисунок:" not in text
    for spoken in ("дробь", "числитель", "знаменатель", "конец дроби", "корень из"):
        assert spoken not in text, spoken
    for address in ("sdamgia", "get_file", "/formula/", "http"):
        assert address not in text, address
    assert "[формула недоступна]" not in text  # every formula was served: every one drawn
    colours, images, outside = _path_colours(document)
    missing = {path: colour for path, colour in expected.items() if colour not in colours}
    assert not missing, f"drawn nowhere as vector paths: {missing}"
    assert images == 1  # the PNG figure, as an image
    assert text.count("[рисунок недоступен]") == 1  # 27761's, which the site did not give
    assert not outside, outside  # every figure fits the page


def test_the_sheet_has_a_header_a_footer_and_the_key_on_its_own_page(site_variant) -> None:  # type: ignore[no-untyped-def]
    variant, _ = site_variant
    document = pdfium.PdfDocument(variant_pdf_bytes(variant=variant, with_solutions=True))
    pages = [" ".join(page.get_textpage().get_text_range().split()) for page in document]
    first = pages[0]
    assert first.startswith("Математика, профильный ЕГЭ")
    assert (
        f"Вариант {variant.public_id} · {timezone.localtime(variant.created_at):%d.%m.%Y}" in first
    )
    for label in ("Фамилия, имя:", "Класс:", "Дата:"):
        assert label in first
    for number, page in enumerate(pages, start=1):
        assert page.endswith(f"вариант {variant.public_id} — стр. {number} из {len(pages)}")
    key = next(n for n, page in enumerate(pages) if "Ответы" in page)
    solutions = next(n for n, page in enumerate(pages) if "Решения · вариант" in page)
    assert key < solutions
    assert not any("Ответ:" in page for page in pages[key:solutions])  # no condition there
    assert "Решение" not in " ".join(pages[key:solutions])
    assert "1 27340 0,5" in pages[key]
    assert "2 27244 8" in pages[key]


def test_the_key_alone_with_the_solutions_draws_their_formulas(site_variant) -> None:  # type: ignore[no-untyped-def]
    """The key as a file of its own (issue 51): no condition, the solutions' formulas and
    figures drawn as in the whole sheet."""
    variant, _ = site_variant
    text = pdf_text(variant_pdf_bytes(variant=variant, part="key", with_solutions=True))
    assert text.startswith(f"Ответы · вариант {variant.public_id}")
    key, solutions = text.split("Решения · вариант")
    assert "Ответ:" not in key  # no answer box: no condition
    assert "Решение" in solutions
    assert "[формула недоступна]" not in text
    for spoken in ("дробь", "числитель", "корень из"):
        assert spoken not in text, spoken


def test_a_sheet_printed_a_moment_ago_is_served_as_stored_not_drawn_again(  # type: ignore[no-untyped-def]
    variant: Variant, monkeypatch
) -> None:
    """A 40-copy sheet took 25 s to draw, and reading the link its print returned drew it
    again, each time. A problem fetched again since is drawn anew."""
    from problems import sheets

    drawn: list[int] = []
    draw = sheets.variant_pdf_bytes

    def counted(**options):  # type: ignore[no-untyped-def]
        drawn.append(1)
        return draw(**options)

    monkeypatch.setattr(sheets, "variant_pdf_bytes", counted)
    first = sheets.variant_sheet(variant=variant, copies=2)
    again = sheets.variant_sheet(variant=variant, copies=2)
    assert (again.name, again.data) == (first.name, first.data)
    assert len(drawn) == 1
    sheets.variant_sheet(variant=variant, copies=3)  # other options: drawn
    assert len(drawn) == 2
    Problem.objects.filter(problem_id=variant.problem_ids[0]).update(fetched_at=timezone.now())
    sheets.variant_sheet(variant=variant, copies=2)
    assert len(drawn) == 3
    Problem.objects.filter(problem_id=variant.problem_ids[1]).update(answer="42")  # the admin
    sheets.variant_sheet(variant=variant, copies=2)
    assert len(drawn) == 4
