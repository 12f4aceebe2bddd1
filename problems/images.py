"""Images a problem's text points to (figures, formulas, a photo's URL), fetched under the
bank's image rules: `SDAMGIA_IMAGE_ALLOW_PRIVATE`, `SDAMGIA_IMAGE_MAX_BYTES`,
`SDAMGIA_IMAGE_TIMEOUT` (`core.image_fetch`; ImageProblem when refused or unreadable)."""

from __future__ import annotations

from django.conf import settings

from core.image_fetch import image_fetch


def site_image_fetch(url: str, *, timeout: float | None = None) -> bytes:
    """The image at `url`, within `timeout` seconds (at most SDAMGIA_IMAGE_TIMEOUT)."""
    limit = settings.SDAMGIA_IMAGE_TIMEOUT
    return image_fetch(
        url,
        allow_private=settings.SDAMGIA_IMAGE_ALLOW_PRIVATE,
        private_setting="SDAMGIA_IMAGE_ALLOW_PRIVATE",
        max_bytes=settings.SDAMGIA_IMAGE_MAX_BYTES,
        timeout=limit if timeout is None else min(limit, timeout),
    )
