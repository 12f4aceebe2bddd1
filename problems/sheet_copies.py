"""Copies of a printed variant for a class (issue 51, item 3): the same problems in an
order of each copy's own, so that neighbours do not share their answers' order.

Copy 1 keeps the variant's own order (the numbering `sdamgia_check_variant` grades by);
copy k > 1 is shuffled by a generator seeded with the variant's id and k, so a reprint
gives every copy the same order again, in any process. A copy's order differs from every
earlier copy's while the problems have orders enough for that (3 problems: 6 orders).
"""

from __future__ import annotations

import math
import random
from typing import Literal

from core.exceptions import InvalidInput

MAX_COPIES = 40  # a class; the tool's schema, the REST parameter and the service share it
# all: the sheets, then the answer keys (and the solutions when asked); sheets: the sheets
# alone, to hand out; key: the answer keys alone (and the solutions when asked).
SheetPart = Literal["all", "sheets", "key"]
SHEET_PARTS: tuple[SheetPart, ...] = ("all", "sheets", "key")
TRIES = 64  # reshuffles of one copy before a repeated order is accepted


def copies_parse(text: str) -> int:
    """The number of copies a URI's or a query's text asks for, checked (1…MAX_COPIES)."""
    if not (text.isascii() and text.isdigit() and len(text) <= 3 and 1 <= int(text) <= MAX_COPIES):
        raise InvalidInput(f"copies must be from 1 to {MAX_COPIES}", field="copies")
    return int(text)


def copy_orders(*, problem_ids: list[str], name: str, copies: int) -> list[list[str]]:
    """The order of the problems on each of `copies` copies of the variant `name`."""
    orders = [list(problem_ids)]
    seen = {tuple(problem_ids)}
    distinct = math.factorial(min(len(problem_ids), 20))  # 20! is more than enough
    for number in range(2, copies + 1):
        order = list(problem_ids)
        for attempt in range(TRIES):
            order = list(problem_ids)
            # a reproducible order, not a secret
            random.Random(f"{name}:{number}:{attempt}").shuffle(order)  # noqa: S311
            if tuple(order) not in seen or len(seen) >= distinct:
                break
        seen.add(tuple(order))
        orders.append(order)
    return orders
