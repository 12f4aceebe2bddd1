"""An amendment file's text (its reading is in `orders`)."""

from __future__ import annotations

from core.exceptions import InvalidInput


def amendment_text(data: bytes) -> str:
    """An amendment file's text: a PDF's text layer, or the file as UTF-8 text. BadPdf (naming
    `file`) for a PDF pdfium cannot read or over the ingestion's limits (`pdf_open`: a page
    bomb is refused in milliseconds); InvalidInput for text that is not UTF-8."""
    if data.startswith(b"%PDF"):
        from normagpt.ingest.pdf import pdf_texts

        return "\n".join(pdf_texts(data, name="the amendment"))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput("the amendment is neither a PDF nor UTF-8 text", field="file") from exc
