"""Static files that work whether or not `collectstatic` ran.

Collected (`manage.py serve`, `make run`), the files are served hashed and compressed from
STATIC_ROOT with far-future caching. Not collected (a plain `uvicorn config.asgi:application`
with DEBUG off), a page would fail with "Missing staticfiles manifest entry"; here it
links the file by its own name instead, and WhiteNoise serves it from the app that holds
it (`WHITENOISE_USE_FINDERS`).
"""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    manifest_strict = False

    def stored_name(self, name: str) -> str:
        try:
            return super().stored_name(name)
        except ValueError:  # not collected: the file's own name, served from its app
            return name
