"""Pages of the problem bank outside the REST API: a printed sheet at its signed link."""

from __future__ import annotations

from django.core.files.storage import default_storage
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseNotFound
from django.views.decorators.http import require_safe

from problems.sheet_links import sheet_name


@require_safe
def sheet_file(request: HttpRequest) -> HttpResponse | FileResponse:
    """A printed sheet, for whoever holds its link (`problems.sheet_links`); a link that
    cannot be served says why, in plain text."""
    name = sheet_name(request.GET.get("t", ""))
    if name is None:
        return _not_found("This sheet link is invalid or has expired: print the variant again.")
    try:
        handle = default_storage.open(name, "rb")
    except FileNotFoundError:
        return _not_found("The sheet is no longer stored: print the variant again.")
    response = FileResponse(handle, content_type="application/pdf", filename=name.rsplit("/")[-1])
    response["Cache-Control"] = "private, no-store"
    return response


def _not_found(text: str) -> HttpResponse:
    return HttpResponseNotFound(text, content_type="text/plain; charset=utf-8")
