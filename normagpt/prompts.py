"""Loading the YAML prompts of `normagpt/prompts/` and turning them into instructions.

A prompt file has `role`, `goal`, `instructions`, `rules`, `output_format` (a schema and an
example) and an `input` template whose `{placeholders}` the node fills in.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
NODES = ("planner", "executor", "judge", "finalizer")


@dataclass(frozen=True)
class Prompt:
    name: str
    system: str
    input_template: str

    def user(self, **values: Any) -> str:
        """The input template with every placeholder filled (non-strings as YAML)."""
        rendered = {key: as_text(value) for key, value in values.items()}
        return self.input_template.format_map(rendered)


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value or "—"
    if value in (None, [], {}):
        return "—"
    if isinstance(value, int | float):
        return str(value)
    return yaml.safe_dump(value, allow_unicode=True, sort_keys=False, width=100).strip()


@functools.cache
def prompt_load(name: str) -> Prompt:
    """The prompt `name` from its YAML file; ValueError naming a missing section."""
    data = yaml.safe_load((PROMPTS_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    missing = [
        key
        for key in ("role", "goal", "instructions", "rules", "output_format", "input")
        if key not in data
    ]
    if missing:
        raise ValueError(f"prompt {name}: missing section(s) {', '.join(missing)}")
    fmt = data["output_format"]
    lines = [
        data["role"].strip(),
        "",
        f"Цель: {data['goal'].strip()}",
        "",
        "Инструкции:",
        *(f"- {item}" for item in data["instructions"]),
        "",
        "Правила:",
        *(f"- {item}" for item in data["rules"]),
        "",
        "Формат ответа — один JSON-объект:",
        fmt["schema"].strip(),
        "",
        "Пример:",
        fmt["example"].strip(),
    ]
    return Prompt(name=name, system="\n".join(lines), input_template=data["input"])
