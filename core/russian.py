"""Russian morphology, one per process, for every app that reads Russian words.

pymorphy3's analyzer (OpenCorpora's word forms: 16 MB of dictionaries, 0.3 s to load) is
loaded on first use, not at start-up: a desktop client's new process pays it only when a
request needs it.
"""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def morphology() -> Any:
    """The process's pymorphy3 `MorphAnalyzer` (thread-safe for parsing)."""
    import pymorphy3

    return pymorphy3.MorphAnalyzer()
