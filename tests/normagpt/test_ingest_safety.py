"""Ingestion is safe against any file (issue 48, part 4).

Hostile files (a page-tree bomb, a huge page, a truncated, an encrypted file, not a PDF)
are refused before a page is drawn — within 5 s, in under 500 MB, with a message naming
the file, the page and the rule — measured in a process of their own. A re-ingest that
fails leaves the edition it replaces whole and searchable; a killed ingest is marked
failed by the recovery sweep and, started again, goes on from the pages it had rendered.
"""

from __future__ import annotations

import io
import json
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.utils import timezone
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from core import background
from core.exceptions import InvalidInput
from core.fonts import cyrillic_font
from core.holders import holder_token
from normagpt import services
from normagpt.editions import amendment_text
from normagpt.exceptions import BadPdf, DocumentNotFound, IngestRunning
from normagpt.ingest import documents, edition, pdf_open
from normagpt.ingest.pdf import render_scale
from normagpt.models import NormClause, NormDocument, NormPageDraft
from tests.conftest import PYTHON, ROOT, STARTUP_DEADLINE, subprocess_env
from tests.normagpt.test_web import INLINE

# The bounds for refusing a hostile file. The time is measured inside the child
# around the ingestion alone (not Python's and Django's start, which a busy machine can
# stretch to tens of seconds); a refusal takes some 10 ms, so 5 s leaves room for a very
# busy machine while a file that gets drawn (minutes, gigabytes) cannot pass.
REFUSED_WITHIN = 5.0
PEAK_MB = 500
OLD_TEXT = [
    "5.1 Морозостойкость бетона фундаментов принимают не ниже F150.",
    "5.2 Водонепроницаемость бетона подземных конструкций не ниже W6.",
]


# --- files ----------------------------------------------------------------------------------


def raw_pdf(*objects: bytes) -> bytes:
    """A PDF written by hand: the objects numbered from 1 (1 is the catalog), an xref."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


CATALOG = b"<< /Type /Catalog /Pages 2 0 R >>"


def page_tree_bomb(levels: int = 6, width: int = 10) -> bytes:
    """A million pages in a kilobyte: each node of the page tree names the node below it
    `width` times, and the last names one page, so pdfium finds every page (the file the
    issue timed at some 280 hours of rendering)."""
    nodes = [
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join([b"%d 0 R" % (3 + level)] * width), width ** (levels - level))
        for level in range(levels)
    ]
    return raw_pdf(CATALOG, *nodes, b"<< /Type /Page /MediaBox [0 0 595 842] >>")


def page_tree_claiming(count: int) -> bytes:
    """One page, and a page tree that claims `count`."""
    return raw_pdf(
        CATALOG,
        b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % count,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>",
    )


def huge_page(side: int = 14_400) -> bytes:
    """One page of `side` × `side` pt with a word on it (some 590 bytes)."""
    content = b"BT /F1 24 Tf 72 72 Td (Huge) Tj ET"
    return raw_pdf(
        CATALOG,
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>" % (side, side),
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    )


def norm_pdf(
    texts: list[str], *, sizes: dict[int, tuple[float, float]] | None = None, **kw: Any
) -> bytes:
    """A PDF with a page per text (lines split on \\n); page n of `sizes` is that large."""
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4, **kw)
    for number, text in enumerate(texts, 1):
        pdf.setPageSize((sizes or {}).get(number, A4))
        pdf.setFont(cyrillic_font(), 12)
        for i, line in enumerate(text.split("\n")):
            pdf.drawString(56, 780 - 16 * i, line)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def not_a_pdf() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 64), "white").save(buffer, "PNG")  # a scan uploaded as .pdf
    return buffer.getvalue()


def document_with(data: bytes, name: str, code: str = "ГОСТ 99999-2099") -> NormDocument:
    return services.document_save(code=code, title="Тест", file=ContentFile(data, name=name))


# --- hostile files, each in a process of its own --------------------------------------------

CHILD_INGEST = r"""
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # a regression fails, not the host
import django
django.setup()
from normagpt import services
from normagpt.exceptions import BadPdf
started = time.monotonic()
try:
    services.document_ingest(document_id=int(sys.argv[1]))
    outcome = "ingested"
except BadPdf as exc:
    outcome = exc.message
except BaseException as exc:
    outcome = f"{type(exc).__name__}: {exc}"
seconds = time.monotonic() - started
# this process's own peak (VmHWM, reset by exec): `ru_maxrss` keeps the peak of the test
# worker it was spawned from, which a long run of other tests grows past PEAK_MB
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
print(json.dumps({"outcome": outcome, "seconds": seconds, "peak_mb": peak}))
"""

HOSTILE: dict[str, tuple[str, Callable[[], bytes], list[str]]] = {
    "page-tree bomb": (
        "bomb.pdf", page_tree_bomb, ["bomb.pdf", "claims 1,000,000 pages", "NORMAGPT_MAX_PAGES"]
    ),
    "huge page": (
        "huge.pdf",
        huge_page,
        ["huge.pdf", "page 1 is 14,400 × 14,400 pt", "A0 (2384 × 3370 pt)", "NORMAGPT_MAX_PAGE_AREA"],
    ),
    "truncated": (
        "truncated.pdf",
        lambda: (whole := norm_pdf(OLD_TEXT * 3))[: len(whole) // 2],
        ["truncated.pdf", "damaged or truncated"],
    ),
    "encrypted": (
        "encrypted.pdf",
        lambda: norm_pdf(OLD_TEXT, encrypt="secret"),
        ["encrypted.pdf", "encrypted", "password"],
    ),
    "not a PDF": ("scan.pdf", not_a_pdf, ["scan.pdf", "not a PDF"]),
}  # fmt: skip


def child_env(subprocess_db_env: dict[str, str], settings: Any) -> dict[str, str]:
    return subprocess_env(
        **subprocess_db_env,
        DJANGO_MEDIA_ROOT=str(settings.MEDIA_ROOT),
        NORMAGPT_OCR="0",
        NORMAGPT_PAGE_DPI=str(settings.NORMAGPT_PAGE_DPI),
        DJANGO_LOG_LEVEL="ERROR",
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_hostile_file_is_refused_quickly_in_little_memory_naming_file_page_and_rule(
    kind: str, subprocess_db_env: dict[str, str], settings: Any
) -> None:
    name, make, named = HOSTILE[kind]
    data = make()
    document = document_with(data, name)
    child = subprocess.run(
        [PYTHON, "-c", CHILD_INGEST, str(document.pk)],
        cwd=ROOT,
        env=child_env(subprocess_db_env, settings),
        capture_output=True,
        text=True,
        timeout=STARTUP_DEADLINE,
        check=False,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    measured = json.loads(child.stdout.strip().splitlines()[-1])
    outcome = measured["outcome"]
    for fragment in named:
        assert fragment in outcome, (kind, outcome)
    assert "Traceback" not in child.stderr
    assert not outcome.startswith(("MemoryError", "PdfiumError")), outcome
    assert measured["seconds"] < REFUSED_WITHIN, measured
    assert measured["peak_mb"] < PEAK_MB, measured
    document.refresh_from_db()
    assert (document.ingest_status, document.ingest_error) == ("failed", outcome)
    assert document.ingest_holder == ""  # the lease let go


def test_pdf_open_names_the_page_and_the_rule_of_each_limit(settings: Any) -> None:
    settings.NORMAGPT_MAX_PAGES = 2
    with pytest.raises(BadPdf, match=r"^three\.pdf: its page tree claims 3 pages, over the limit of 2 pages: NORMAGPT_MAX_PAGES$"):  # fmt: skip
        pdf_open(norm_pdf(["a", "b", "c"]), name="three.pdf")
    settings.NORMAGPT_MAX_PAGES = 3000
    with pytest.raises(BadPdf, match=r"^bomb\.pdf: page 2 of 2999 cannot be read: the file's page tree names a page"):  # fmt: skip
        pdf_open(page_tree_claiming(2999), name="bomb.pdf")  # under the limit, pages missing
    wide = norm_pdf(OLD_TEXT, sizes={2: (4000, 2500)})
    with pytest.raises(BadPdf, match=r"^gost\.pdf: page 2 is 4,000 × 2,500 pt, over the limit of A0 \(2384 × 3370 pt\): NORMAGPT_MAX_PAGE_AREA$"):  # fmt: skip
        pdf_open(wide, name="gost.pdf")
    settings.NORMAGPT_MAX_PAGE_AREA = 600 * 850  # A4 (page 1) within it
    with pytest.raises(BadPdf, match=r"page 2 is 4,000 × 2,500 pt, over the limit of 510,000 pt²"):
        pdf_open(wide, name="gost.pdf")
    settings.NORMAGPT_MAX_FILE_MB = 1
    with pytest.raises(BadPdf, match=r"^big\.pdf is 2 MB, over the limit of 1 MB: NORMAGPT_MAX_FILE_MB$"):  # fmt: skip
        pdf_open(b"%PDF-1.7\n" + b" " * 2**21, name="big.pdf")
    with pytest.raises(BadPdf, match=r"^empty\.pdf is empty$"):
        pdf_open(b"", name="empty.pdf")


def test_an_amendment_that_is_a_page_bomb_is_refused_in_the_request() -> None:
    """The amendment admin reads the file in the request: the limits bound that read."""
    started = time.monotonic()
    with pytest.raises(BadPdf, match="the amendment: its page tree claims 1,000,000 pages"):
        amendment_text(page_tree_claiming(1_000_000))
    with pytest.raises(BadPdf, match="the amendment: its page tree claims 1,000,000 pages"):
        amendment_text(page_tree_bomb())
    assert time.monotonic() - started < REFUSED_WITHIN
    with pytest.raises(BadPdf, match="the amendment: page 1 is 14,400 × 14,400 pt"):
        amendment_text(huge_page())


def test_a_page_whose_image_would_exceed_the_pixel_limit_is_drawn_at_a_lower_dpi(
    db: None, settings: Any
) -> None:
    """A page within the area limit is never refused for the DPI we chose: it is drawn
    coarser. A0 at the default 110 DPI fits the default limit whole."""
    assert render_scale(2384, 3370, 110) == 110 / 72
    settings.NORMAGPT_OCR = False
    settings.NORMAGPT_PAGE_DPI = 300  # A4: 2480 × 3508 px, 8.7 Mpx
    settings.NORMAGPT_MAX_RENDER_PIXELS = 1_000_000
    document = document_with(norm_pdf(OLD_TEXT), "gost.pdf")
    page = services.document_ingest(document_id=document.pk).pages.get(number=1)
    assert 900_000 < page.width * page.height <= 1_000_000
    assert round(page.width / page.height, 2) == round(595.28 / 841.89, 2)
    assert "Морозостойкость бетона" in page.text


def test_a_word_hyphenated_at_a_line_end_is_joined_in_the_page_text(
    db: None, settings: Any
) -> None:
    settings.NORMAGPT_OCR = False
    settings.NORMAGPT_PAGE_DPI = 40
    data = norm_pdf(["5.1 Общие требования к наи-\nменованию изделий из бетона и арматуры."])
    document = services.document_ingest(document_id=document_with(data, "gost.pdf").pk)
    text = document.pages.get().text
    assert "наименованию" in text
    assert "\u0002" not in text


# --- a failed re-ingest ---------------------------------------------------------------------


def edition_state(document: NormDocument) -> dict[str, Any]:
    """What readers see of a document: its pages, clauses, search hits, stored images."""
    pages = list(document.pages.order_by("number").values_list("number", "text", "image"))
    return {
        "pages": pages,
        "clauses": list(
            NormClause.objects.filter(document=document)
            .order_by("position")
            .values_list("number", "text", "page__number")
        ),
        "hits": [
            (hit.clause.document.code, hit.clause.number)
            for hit in services.clauses_search(keywords=["морозостойкость бетона"])
        ],
        "pages hit": [
            (hit.page.document.code, hit.page.number)
            for hit in services.pages_search(keywords=["водонепроницаемость"])
        ],
        "images": [
            document.pages.model._meta.get_field("image").storage.exists(p[2]) for p in pages
        ],
        "page_count": NormDocument.objects.get(pk=document.pk).page_count,
    }


@pytest.fixture
def old_edition(db: None, settings: Any) -> NormDocument:
    settings.NORMAGPT_OCR = False
    settings.NORMAGPT_PAGE_DPI = 40
    document = services.document_ingest(document_id=document_with(norm_pdf(OLD_TEXT), "old.pdf").pk)
    assert len(edition_state(document)["hits"]) == 1
    return document


def images_stored(settings: Any) -> set[str]:
    return {p.name for p in (Path(settings.MEDIA_ROOT) / "normagpt" / "pages").glob("*")}


NEW_TEXT = ["5.1 Морозостойкость бетона не ниже F200.", "5.2 Новый пункт.", "5.3 Ещё пункт."]


def test_a_re_ingest_refused_at_page_2_leaves_the_old_edition_whole(
    old_edition: NormDocument, settings: Any
) -> None:
    before, images = edition_state(old_edition), images_stored(settings)
    document_with(norm_pdf(NEW_TEXT, sizes={2: (15_000, 15_000)}), "new.pdf")
    with pytest.raises(
        BadPdf, match=r"new\.pdf: page 2 is 15,000 × 15,000 pt.*NORMAGPT_MAX_PAGE_AREA"
    ):
        services.document_ingest(document_id=old_edition.pk)
    assert edition_state(old_edition) == before
    assert images_stored(settings) == images
    old_edition.refresh_from_db()
    assert old_edition.ingest_status == "failed"
    assert "page 2 is 15,000 × 15,000 pt" in old_edition.ingest_error


def test_a_page_that_fails_while_drawn_leaves_the_old_edition_and_no_new_images(
    old_edition: NormDocument, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pypdfium2 as pdfium

    before, images = edition_state(old_edition), images_stored(settings)
    document_with(norm_pdf(NEW_TEXT), "new.pdf")
    render, drawn = pdfium.PdfPage.render, []

    def second_fails(self: Any, **kwargs: Any) -> Any:
        drawn.append(1)
        if len(drawn) == 2:
            raise pdfium.PdfiumError("Failed to render page.")
        return render(self, **kwargs)

    monkeypatch.setattr(pdfium.PdfPage, "render", second_fails)
    with pytest.raises(BadPdf, match=r"^new\.pdf: page 2 could not be drawn: Failed to render page\.$"):  # fmt: skip
        services.document_ingest(document_id=old_edition.pk)
    assert edition_state(old_edition) == before
    assert images_stored(settings) == images  # page 1's new image deleted again
    assert not NormPageDraft.objects.exists()


def test_a_re_ingest_failing_in_the_swap_rolls_back_to_the_old_edition(
    old_edition: NormDocument, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, images = edition_state(old_edition), images_stored(settings)
    document_with(norm_pdf(NEW_TEXT), "new.pdf")

    def index_breaks(**kwargs: Any) -> int:
        raise RuntimeError("the index broke")

    monkeypatch.setattr(edition, "document_index", index_breaks)  # after the old pages went
    with pytest.raises(RuntimeError):
        services.document_ingest(document_id=old_edition.pk)
    assert edition_state(old_edition) == before
    assert images_stored(settings) == images
    old_edition.refresh_from_db()
    assert old_edition.ingest_error == "ingestion failed: RuntimeError: the index broke"


def test_a_re_ingest_replaces_the_edition_and_then_deletes_the_old_images(
    old_edition: NormDocument, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    old_images = images_stored(settings)
    document_with(norm_pdf(NEW_TEXT), "new.pdf")
    with django_capture_on_commit_callbacks(execute=True):
        document = services.document_ingest(document_id=old_edition.pk)
    state = edition_state(document)
    assert [p[1] for p in state["pages"]] == NEW_TEXT
    assert all(state["images"])
    assert images_stored(settings) == {Path(p[2]).name for p in state["pages"]}
    assert not old_images & images_stored(settings)
    assert (document.ingest_status, document.page_count, document.ingest_done) == ("done", 3, 3)


# --- pages from texts -----------------------------------------------------------------------


def test_page_texts_replace_an_edition_cleaned_and_searchable(
    old_edition: NormDocument, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    texts = ["5.1 Морозостойкость бетона наи\u0002\nменьшая F100.", "5.2 Водонепроницаемость W8."]
    progress: list[tuple[int, int]] = []
    with django_capture_on_commit_callbacks(execute=True):
        document = services.document_texts_ingest(
            document_id=old_edition.pk, texts=texts, progress=lambda d, t: progress.append((d, t))
        )
    assert progress == [(1, 2), (2, 2)]
    assert (document.ingest_status, document.page_count) == ("done", 2)
    pages = list(document.pages.order_by("number"))
    assert pages[0].text == "5.1 Морозостойкость бетона наименьшая F100."
    assert [(bool(p.image), p.has_text_layer, p.clauses) for p in pages] == [
        (False, True, ["5.1"]),
        (False, True, ["5.2"]),
    ]
    [hit] = services.clauses_search(keywords=["наименьшая морозостойкость"])
    assert hit.clause.text.startswith("5.1 Морозостойкость бетона наименьшая")
    assert images_stored(settings) == set()  # the PDF edition's images, after the commit


def test_texts_a_new_file_and_a_start_are_refused_while_the_pdf_is_being_ingested(
    old_edition: NormDocument,
) -> None:
    before = edition_state(old_edition)
    NormDocument.objects.filter(pk=old_edition.pk).update(
        ingest_status="running", ingest_holder=holder_token(), ingest_heartbeat_at=timezone.now()
    )
    with pytest.raises(IngestRunning, match="is being ingested"):
        services.document_texts_ingest(document_id=old_edition.pk, texts=["5.1 Иное."])
    with pytest.raises(IngestRunning, match="is being ingested"):
        services.document_ingest_start(document_id=old_edition.pk)
    with pytest.raises(IngestRunning, match="upload its new file after that"):
        document_with(norm_pdf(NEW_TEXT), "new.pdf")
    assert edition_state(old_edition) == before
    with pytest.raises(InvalidInput, match="at least one page"):
        services.document_texts_ingest(document_id=old_edition.pk, texts=[])
    with pytest.raises(DocumentNotFound):
        services.document_texts_ingest(document_id=10**9, texts=["x"])


# --- the lease ------------------------------------------------------------------------------


def lease(document: NormDocument, holder: str, seconds_ago: float | None) -> None:
    beat = None if seconds_ago is None else timezone.now() - timedelta(seconds=seconds_ago)
    NormDocument.objects.filter(pk=document.pk).update(
        ingest_status="running", ingest_holder=holder, ingest_heartbeat_at=beat,
        ingest_done=36, ingest_total=120,
    )  # fmt: skip


def test_the_sweep_fails_ingestions_whose_holder_stopped_and_leaves_live_ones(db: None) -> None:
    codes = ["СП 1", "СП 2", "СП 3", "СП 4"]
    lapsed, before_leases, elsewhere, mine = (
        NormDocument.objects.create(code=code, title="x") for code in codes
    )
    lease(lapsed, "elsewhere:42:7:abc", seconds_ago=600)  # another host, silent
    lease(before_leases, "", seconds_ago=None)  # `running` from before the upgrade
    lease(elsewhere, "elsewhere:43:7:def", seconds_ago=1)  # another host, beating
    lease(mine, holder_token(), seconds_ago=1)  # this process
    services.runs_recover()
    state = dict(NormDocument.objects.values_list("code", "ingest_status"))
    assert state == {"СП 1": "failed", "СП 2": "failed", "СП 3": "running", "СП 4": "running"}
    lapsed.refresh_from_db()
    assert lapsed.ingest_error == (
        "ingestion stopped (no heartbeat for 30 s) at page 37 of 120: "
        "start it again to go on from there"
    )
    before_leases.refresh_from_db()
    assert before_leases.ingest_error.startswith(
        "ingestion stopped (it began before ingestions kept a lease)"
    )


CHILD_KILLED = r"""
import sys, threading
import django
django.setup()
from normagpt.ingest import documents
render = documents.page_render
def render_or_hang(pdf, index, **kwargs):
    if index == 3:  # drawing page 4, the process is killed
        threading.Event().wait()
    return render(pdf, index, **kwargs)
documents.page_render = render_or_hang
from normagpt import services
services.document_ingest(document_id=int(sys.argv[1]))
"""


def spy(note: Callable[[int], None]) -> Callable[..., Any]:
    """`page_render` that calls `note(index)` first."""
    render = documents.page_render

    def page_render(pdf: Any, index: int, **kwargs: Any) -> Any:
        note(index)
        return render(pdf, index, **kwargs)

    return page_render


def wait_for(condition: Any, child: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + STARTUP_DEADLINE
    while not condition():
        if child.poll() is not None:
            pytest.fail(f"the ingesting process ended: {child.stderr.read().decode()[-3000:]}")  # type: ignore[union-attr]
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.mark.django_db(transaction=True)
def test_a_killed_ingest_is_marked_failed_and_goes_on_from_its_pages_when_started_again(
    spawn: Any, subprocess_db_env: dict[str, str], settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.NORMAGPT_OCR = False
    settings.NORMAGPT_PAGE_DPI = 40
    old = services.document_ingest(document_id=document_with(norm_pdf(OLD_TEXT), "old.pdf").pk)
    before = edition_state(old)
    texts = [f"5.{n} Пункт {n}: морозостойкость бетона F{100 + n}." for n in range(1, 7)]
    document_with(norm_pdf(texts), "new.pdf")
    child = spawn(
        [PYTHON, "-c", CHILD_KILLED, str(old.pk)], **child_env(subprocess_db_env, settings)
    )
    done = NormDocument.objects.filter(pk=old.pk).values_list("ingest_done", flat=True)
    wait_for(lambda: done.first() == 3, child, "three pages rendered")
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert NormDocument.objects.get(pk=old.pk).ingest_status == "running"

    services.runs_recover()  # the recovery sweep
    old.refresh_from_db()
    assert (old.ingest_status, old.ingest_error) == (
        "failed",
        "ingestion stopped (its process ended) at page 4 of 6: start it again to go on from there",
    )
    assert edition_state(old) == before  # searchable as it was all along
    drawn: list[int] = []
    monkeypatch.setattr(documents, "page_render", spy(lambda index: drawn.append(index)))
    document = services.document_ingest(document_id=old.pk)
    assert drawn == [3, 4, 5]  # pages 4 to 6: the first three were kept
    assert (document.ingest_status, document.page_count) == ("done", 6)
    assert [p.text for p in document.pages.order_by("number")] == texts
    assert not NormPageDraft.objects.exists()


# --- the admin hands the work to a task -----------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_admin_upload_renders_no_page_in_the_request(
    client: Any, staff: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.NORMAGPT_OCR = False
    settings.NORMAGPT_PAGE_DPI = 40
    threads: list[str] = []
    seen = spy(lambda index: threads.append(threading.current_thread().name))
    monkeypatch.setattr(documents, "page_render", seen)
    client.force_login(staff)
    response = client.post(
        "/admin/normagpt/normdocument/add/",
        {
            "code": "СП 70.13330.2012", "title": "Конструкции", "kind": "sp",
            "status": "in_force", "file": SimpleUploadedFile("sp.pdf", norm_pdf(OLD_TEXT)),
            **INLINE,
        },
    )  # fmt: skip
    assert response.status_code == 302
    assert background.drain(timeout=60)
    assert NormDocument.objects.get().ingest_status == "done"
    assert len(threads) == 2
    assert threading.current_thread().name not in threads  # drawn on the pool, not here


def test_editing_a_document_in_the_admin_leaves_a_running_ingestion_s_lease(
    client: Any, staff: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The admin writes the form's fields only: the ingestion's page and heartbeat, written
    while the request ran, stay."""
    from normagpt.admin.corpus import NormDocumentForm

    document = NormDocument.objects.create(code="СП 70.13330.2012", title="Старое", kind="sp")
    holder = holder_token()
    lease(document, holder, seconds_ago=1)
    clean = NormDocumentForm.clean_file
    beat = timezone.now()

    def page_rendered_meanwhile(form: Any) -> Any:
        NormDocument.objects.filter(pk=document.pk).update(ingest_done=37, ingest_heartbeat_at=beat)
        return clean(form)

    monkeypatch.setattr(NormDocumentForm, "clean_file", page_rendered_meanwhile)
    client.force_login(staff)
    response = client.post(
        f"/admin/normagpt/normdocument/{document.pk}/change/",
        {
            "code": "СП 70.13330.2012",
            "title": "Новое",
            "kind": "sp",
            "status": "in_force",
            **INLINE,
        },
    )
    assert response.status_code == 302
    document.refresh_from_db()
    assert document.title == "Новое"
    lease_kept = (document.ingest_status, document.ingest_holder, document.ingest_heartbeat_at)
    assert lease_kept == ("running", holder, beat)
    assert (document.ingest_done, document.ingest_total) == (37, 120)


# --- statistics -----------------------------------------------------------------------------


def analyze_count() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'normagpt_normclause'"
        )
        return int(cursor.fetchone()[0])


ELEMENTS = "плит балок колонн стен ригелей фундаментов свай ростверков опор мостов шахт складов"
PLACES = "покрытия перекрытия подвала цоколя чердака лестниц галерей тоннелей резервуаров эстакад"


def test_an_ingest_that_changes_many_clauses_analyzes_the_search_tables(db: None) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("ANALYZE is for PostgreSQL's planner; SQLite's search needs no statistics")
    texts = [
        "\n".join(
            f"5.{p}.{i} Морозостойкость бетона {element} {place} принимают не ниже F{50 * i}."
            for i, place in enumerate(PLACES.split(), 1)
        )
        for p, element in enumerate(ELEMENTS.split(), 1)
    ]  # 12 pages of 10 clauses
    document = NormDocument.objects.create(code="СП 5", title="x")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE normagpt_normclause")  # the planner counts what is there
    counted = analyze_count()
    services.document_texts_ingest(document_id=document.pk, texts=texts)
    assert NormClause.objects.count() == 120
    assert analyze_count() == counted + 1  # 120 clauses: more than a tenth and 50
    services.document_texts_ingest(document_id=document.pk, texts=texts[:2])
    assert analyze_count() == counted + 2  # 120 removed, 20 added
    services.document_texts_ingest(document_id=document.pk, texts=texts[:3])
    assert analyze_count() == counted + 2  # 50 rows of 20: autovacuum's rule does not fire


@pytest.mark.django_db
def test_a_new_edition_keeps_its_pages_ids_so_earlier_citations_still_open(corpus) -> None:  # type: ignore[no-untyped-def]
    """Ingesting a document again gave every page a new id: a finished run's sources
    (`/normagpt/pages/2/?clause=10.3.2`) then answered 404."""
    from normagpt.ingest.edition import edition_replace
    from normagpt.models import NormClause, NormPage

    document = corpus[0]
    old = list(document.pages.order_by("number"))
    ids = [page.pk for page in old]
    fresh = [
        NormPage(
            document_id=document.pk, number=page.number, text=f"{page.text} Новая редакция.",
            image=page.image.name, width=page.width, height=page.height,
            clauses=page.clauses, has_text_layer=True, ocr=False,
        )
        for page in old
    ]  # fmt: skip
    extra = NormPage(
        document_id=document.pk,
        number=len(old) + 1,
        text="12.1 Пасеку размещают на расстоянии не менее 100 м от жилых домов.",
    )
    edition_replace(document_id=document.pk, pages=[*fresh, extra], holder=None)
    pages = list(document.pages.order_by("number"))
    assert [page.pk for page in pages[: len(ids)]] == ids
    assert pages[0].text.endswith("Новая редакция.")
    assert NormClause.objects.filter(page=pages[-1], number="12.1").exists()  # indexed
    assert NormClause.objects.filter(page=pages[0]).exists()
    # its image's address is the same: a cache must ask again, and learns it changed
    from django.test import Client

    browser = Client()
    seen = browser.get(f"/normagpt/pages/{pages[0].pk}/image/")
    assert "no-cache" in seen["Cache-Control"]
    unchanged = browser.get(
        f"/normagpt/pages/{pages[0].pk}/image/", HTTP_IF_NONE_MATCH=seen["ETag"]
    )
    assert unchanged.status_code == 304
    NormPage.objects.filter(pk=pages[0].pk).update(image=pages[1].image.name)  # re-rendered
    again = browser.get(f"/normagpt/pages/{pages[0].pk}/image/", HTTP_IF_NONE_MATCH=seen["ETag"])
    assert again.status_code == 200
    assert again["ETag"] != seen["ETag"]
    # a shorter edition drops the pages past its end, the others keep their ids
    edition_replace(document_id=document.pk, pages=fresh[:1], holder=None)
    assert list(document.pages.values_list("pk", flat=True)) == ids[:1]
