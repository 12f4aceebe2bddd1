"""An amendment's text read order by order: its acts found (`reading`), each read on its
own (`acts`)."""

from __future__ import annotations

from normagpt.editions.acts import act_read
from normagpt.editions.entities import Reading
from normagpt.editions.reading import acts_found


def amendment_read(text: str) -> Reading:
    """Every order of an amendment's text (a PDF's text layer or typed text), read or named
    with its reason, in the order of the text."""
    return Reading(tuple(act_read(act) for act in acts_found(text)))
