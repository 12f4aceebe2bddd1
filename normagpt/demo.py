"""A small sample corpus for `manage.py normagpt_demo`: PDFs drawn with reportlab.

Every page carries a banner and a watermark saying it is a SAMPLE, not a real norm: the
texts are paraphrases written for the demonstration; real work needs the real documents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.core.files import File
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from core.fonts import cyrillic_font
from normagpt.ingest import document_ingest, document_save
from normagpt.models import NormDocument

BANNER = "ОБРАЗЕЦ ДЛЯ ДЕМОНСТРАЦИИ — НЕ НОРМАТИВНЫЙ ДОКУМЕНТ"


@dataclass(frozen=True)
class SampleDocument:
    code: str
    title: str
    pages: list[list[str]]
    replaced_by: str | None = None


SAMPLES = [
    SampleDocument(
        code="СП 63.13330.2018",
        title="Бетонные и железобетонные конструкции. Основные положения (образец)",
        pages=[
            [
                "СП 63.13330.2018",
                "Бетонные и железобетонные конструкции. Основные положения",
                "",
                "1 Область применения",
                "1.1 Настоящий свод правил распространяется на проектирование бетонных",
                "и железобетонных конструкций зданий и сооружений.",
                "1.2 Требования свода правил не распространяются на конструкции",
                "из ячеистых бетонов.",
            ],
            [
                "10.3 Требования к толщине защитного слоя бетона",
                "10.3.1 Защитный слой бетона должен обеспечивать совместную работу",
                "арматуры с бетоном, анкеровку арматуры и её сохранность от воздействий",
                "окружающей среды.",
                "10.3.2 Минимальная толщина защитного слоя бетона рабочей арматуры",
                "для плит перекрытия и стен принимается не менее:",
                "  20 мм — в закрытых помещениях при нормальной и пониженной влажности;",
                "  25 мм — в закрытых помещениях при повышенной влажности;",
                "  30 мм — на открытом воздухе;",
                "  40 мм — в грунте и в фундаментах при наличии бетонной подготовки.",
                "10.3.3 Для сборных элементов значения по 10.3.2 уменьшают на 5 мм.",
                "10.3.4 Во всех случаях толщина защитного слоя бетона должна быть",
                "не менее диаметра стержня арматуры.",
            ],
            [
                "10.4 Минимальные расстояния между стержнями арматуры",
                "10.4.1 Расстояния в свету между стержнями арматуры принимают",
                "с учётом диаметра стержней, размера крупного заполнителя и способа",
                "укладки бетона, но не менее 25 мм.",
                "10.5 Анкеровка арматуры",
                "10.5.1 Анкеровку арматуры осуществляют прямым окончанием стержня,",
                "загибом или приваркой поперечных стержней.",
            ],
        ],
    ),
    SampleDocument(
        code="СНиП 52-01-2003",
        title="Бетонные и железобетонные конструкции (образец, заменён)",
        replaced_by="СП 63.13330.2018",
        pages=[
            [
                "СНиП 52-01-2003",
                "Бетонные и железобетонные конструкции. Основные положения",
                "7.3 Защитный слой бетона",
                "7.3.1 Толщину защитного слоя бетона принимают исходя из требований",
                "совместной работы арматуры с бетоном и условий эксплуатации.",
                "Документ заменён: см. СП 63.13330.2018.",
            ]
        ],
    ),
    SampleDocument(
        code="СП 28.13330.2017",
        title="Защита строительных конструкций от коррозии (образец)",
        pages=[
            [
                "СП 28.13330.2017",
                "Защита строительных конструкций от коррозии",
                "5.5 Требования к железобетонным конструкциям в агрессивной среде",
                "5.5.1 В слабоагрессивной среде толщину защитного слоя бетона плит",
                "увеличивают не менее чем на 5 мм против требований СП 63.13330.",
                "5.5.2 В среднеагрессивной и сильноагрессивной средах защитный слой",
                "бетона принимают не менее 30 мм.",
            ]
        ],
    ),
    SampleDocument(
        code="ГОСТ 10180-2012",
        title="Бетоны. Методы определения прочности по контрольным образцам (образец)",
        pages=[
            [
                "ГОСТ 10180-2012",
                "Бетоны. Методы определения прочности по контрольным образцам",
                "4.1 Прочность бетона определяют испытанием серии образцов-кубов",
                "с ребром 100, 150 или 200 мм.",
                "4.2 Образцы изготавливают и хранят в условиях, установленных",
                "стандартом на методы испытания.",
            ]
        ],
    ),
]


def sample_pdf_write(path: Path, sample: SampleDocument) -> Path:
    """Draw `sample` as an A4 PDF at `path`; every page marked as a sample."""
    font = cyrillic_font()
    pdf = canvas.Canvas(str(path), pagesize=A4)
    width, height = A4
    for number, lines in enumerate(sample.pages, start=1):
        pdf.setFillColorRGB(0.75, 0.1, 0.1)
        pdf.setFont(font, 11)
        pdf.drawCentredString(width / 2, height - 36, BANNER)
        pdf.setFillColorRGB(0.93, 0.8, 0.8)
        pdf.saveState()
        pdf.translate(width / 2, height / 2)
        pdf.rotate(35)
        pdf.setFont(font, 72)
        pdf.drawCentredString(0, 0, "ОБРАЗЕЦ")
        pdf.restoreState()
        pdf.setFillColorRGB(0, 0, 0)
        pdf.setFont(font, 12)
        y = height - 90
        for line in lines:
            pdf.drawString(56, y, line)
            y -= 20
        pdf.setFont(font, 9)
        pdf.drawString(56, 30, f"{sample.code} — образец — страница {number}")
        pdf.showPage()
    pdf.save()
    return path


def demo_corpus_load(
    *, directory: Path, progress: Callable[[str, int, int], None] | None = None
) -> list[NormDocument]:
    """Write the sample PDFs into `directory` and ingest them (replacing earlier samples)."""
    documents = []
    for sample in sorted(SAMPLES, key=lambda s: s.replaced_by is not None):
        path = sample_pdf_write(directory / f"{sample.code.replace(' ', '_')}.pdf", sample)
        with path.open("rb") as handle:
            document = document_save(
                code=sample.code,
                title=sample.title,
                replaced_by=sample.replaced_by,
                file=File(handle, name=path.name),
                is_sample=True,
            )

        def report(done: int, total: int, code: str = sample.code) -> None:
            if progress is not None:
                progress(code, done, total)

        documents.append(document_ingest(document_id=document.pk, progress=report))
    return documents
