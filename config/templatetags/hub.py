"""Template filters of the hub's own pages."""

from __future__ import annotations

import re

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

CODE_SPAN = re.compile(r"`([^`\n]+)`")


@register.filter
def code_spans(text: str) -> SafeString:
    """`text` escaped (unless safe already, as `{% translate … as x %}` leaves it), its
    Markdown code spans (`normagpt_ask`) as <code>: the tools' summaries and descriptions
    are written for models, in Markdown, and read by people on the home page."""
    return mark_safe(CODE_SPAN.sub(r"<code>\1</code>", conditional_escape(text)))  # noqa: S308
