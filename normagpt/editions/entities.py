"""What reading an amendment gives (pure data): the changes it makes to clauses, and each
of its orders as written, read or named with the reason it was not."""

from __future__ import annotations

from dataclasses import dataclass

from normagpt.parsing import number_normal

# NormAmendmentChange.Mode: what a change does to the clause it names
REPLACE = "replace"  # a new text of the clause, or of its `part` ('' deletes)
APPEND = "append"  # `text` added at the clause's end (before its note)
SUBSTITUTE = "substitute"  # the words `replaces` become `text`
ADD = "add"  # a clause the edition does not have yet
INSERT = "insert"  # `text` put before the clause's `part`
SECTION = "section"  # a section's or an appendix's clauses replaced by those in `text`
TITLE = "title"  # a section's title: its clauses' heading paths
MODES = (REPLACE, APPEND, SUBSTITUTE, ADD, INSERT, SECTION, TITLE)

# what a change names: a clause, a table, a section or appendix (its number or letter; ''
# the whole text), unnumbered text (the preface)
CLAUSE, TABLE, PART, TEXT = "clause", "table", "section", "text"
PREFACE = "Предисловие"

UNREAD_SHOWN = 200  # an order named in a message, at most this long
ORDER_KEPT = 600  # an order's words kept with what it changes


@dataclass(frozen=True)
class Change:
    """A change an amendment makes. `part` says where in the clause: «абзац 2», «абзац -1»
    (the last), «перечисление 1», «примечание», «после «…»» (an entry or row: the words
    after those); '' the whole clause. `order` is the amendment's words it was read from,
    `targets` what they name."""

    kind: str  # CLAUSE | TABLE | PART | TEXT
    number: str
    text: str
    mode: str = REPLACE
    replaces: str = ""
    part: str = ""
    order: str = ""
    targets: tuple[tuple[str, str], ...] = ()  # what the order names: (kind, number)

    def __post_init__(self) -> None:
        object.__setattr__(self, "number", number_form(self.number))


@dataclass(frozen=True)
class Order:
    """One order of an amendment (one of its verbs: «изложить», «заменить», …): its words,
    the clauses, tables or sections it names (kind, number), the changes read from it, and
    why it was not read ('' when it was)."""

    text: str
    targets: tuple[tuple[str, str], ...]
    changes: tuple[Change, ...] = ()
    reason: str = ""

    @property
    def shown(self) -> str:
        return shortened(self.text, UNREAD_SHOWN)


@dataclass(frozen=True)
class Reading:
    """An amendment's orders in the order of its text."""

    orders: tuple[Order, ...]

    @property
    def changes(self) -> list[Change]:
        return [change for order in self.orders for change in order.changes]

    @property
    def unread(self) -> list[Order]:
        return [order for order in self.orders if not order.changes]


def number_form(number: str) -> str:
    """A number as compared and stored: `number_normal` of it without spaces («А. 1.5» →
    «А.1.5»)."""
    return number_normal("".join(number.split())) if number else ""


def shortened(text: str, most: int) -> str:
    """`text` on one line, cut at `most` characters with «…»."""
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"
