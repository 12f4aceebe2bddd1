"""A variant as a printable sheet (issue 30, item 2): the PDF's text, read back with
pdfium, holds every condition in order, each figure or its address, and after them the
answer key (and the solutions when asked). Printed over REST and from the admin."""

from __future__ import annotations

import io
from pathlib import Path
from unittest import mock

import pypdfium2 as pdfium
import pytest
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.test import Client
from django.utils import timezone
from PIL import Image
from pytest_httpserver import HTTPServer
from rest_framework.test import APIClient

from problems.models import Problem, Variant
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
    assert "missing.png" in text  # the figure that could not be fetched is named
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
