"""What reading a clause gives: its values, each with the condition it is given for."""

from __future__ import annotations

from dataclasses import dataclass

from normagpt import claims as c


@dataclass(frozen=True)
class Segment:
    """A value (or a row's values) of a clause with the condition it is given for."""

    values: tuple[c.Value, ...]
    own: frozenset[str]  # the condition's stems: they count for and against a claim
    context: frozenset[str]  # the subject's and leads' stems: they count only for one
    text: str  # the condition as written
    other: bool = False  # the «other cases» part
    alone: bool = False  # a sentence of one value: its words are its subject's too
