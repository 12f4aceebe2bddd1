"""The pages the services' answers link to: a norm page and its image, a run, a printed
sheet, an uploaded norm file. `config.urls` mounts them as they are; a link is reversed here
(`core.links.link_path`), so an MCP process or a worker makes its links without importing
the admin, DRF and the API docs the whole URLconf loads (0.44 s of a process's first search).
"""

from django.urls import include, path

urlpatterns = [
    path("normagpt/", include("normagpt.urls")),
    # Uploaded norm PDFs, where `FileField.url` points (MEDIA_URL is not served otherwise).
    path("media/normagpt/", include("normagpt.media_urls")),
    # Printed variants, at the signed links problems.sheet_links makes.
    path("media/sheets/", include("problems.sheet_urls")),
]
