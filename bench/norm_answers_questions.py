"""The questions of `bench/norm_answers.py`: real questions on the norms of the dataset
Akumsk/russian-construction-standards and traps (`bench/norm_questions/*.yaml`)."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from normagpt.parsing import number_normal

FORMS = ("keywords", "question")  # a search with the question's keywords, with its whole text
_TABLE = re.compile(r"^(?:таблиц[аеы]|табл\.?)\s*", re.I)
_CLAUSE = re.compile(r"^(?:пункт|п\.)\s*", re.I)


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    keywords: list[str]
    document: str = ""  # none: a trap
    clauses: list[str] = field(default_factory=list)
    value: str = ""
    condition: str = ""
    answer: str = ""
    wrong: str = ""
    other: str = ""
    other_condition: str = ""
    why: str = ""

    @property
    def trap(self) -> bool:
        return not self.document

    @property
    def gold(self) -> set[str]:
        return {clause_key(label) for label in self.clauses}


def clause_key(label: str) -> str:
    """A clause or table as compared: «п. 5.8» → «5.8», «табл. 5.1» → «таблица 5.1»."""
    text = " ".join(str(label).split()).strip(" .,;")
    if (table := _TABLE.match(text)) is not None:
        return "таблица " + number_normal(text[table.end() :].strip(" ."))
    return number_normal(_CLAUSE.sub("", text).strip(" ."))


def questions_load(pattern: str) -> list[Question]:
    """The questions of the YAML files matching `pattern` (a list each, or lists under a
    key), traps last; SystemExit naming the file of a malformed one."""
    import glob

    import yaml

    real, traps = [], []
    for path in sorted(glob.glob(pattern)):
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or []
        items = data if isinstance(data, list) else [i for v in data.values() for i in v]
        for item in items:
            try:
                known = {
                    k: v
                    for k, v in item.items()
                    if k in Question.__dataclass_fields__ and v is not None
                }
                q = Question(**{k: v if k in ("keywords", "clauses") else str(v)
                                for k, v in known.items()})  # fmt: skip
            except TypeError as exc:
                raise SystemExit(f"{path}: {item.get('id', item)}: {exc}") from exc
            if Path(path).stem == "traps":
                q = Question(**{**q.__dict__, "document": ""})
            (traps if q.trap else real).append(q)
    if not real and not traps:
        raise SystemExit(f"no questions in {pattern}")
    return real + traps
