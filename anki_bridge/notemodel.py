"""Note models (Anki note types): the seed's default model and field normalization."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

TEMPLATE_TAG = re.compile(r"\{\{([^{}]+)\}\}")
CLOZE_DELETION = re.compile(r"\{\{c\d+::")  # as Anki reads one: `{{C1::…}}` is none
# Names a template shows that are not fields of the note.
SPECIAL_FIELDS = frozenset(
    {"frontside", "tags", "type", "deck", "subdeck", "card", "cardflag", "cardid"}
)

DEFAULT_MODEL_NAME = "Поля для ChatGPT"
DEFAULT_FIELDS = ("Prompt", "Response", "Context", "Sources")
DEFAULT_TEMPLATES = {
    "Card 1": {
        "Front": (
            '<div class="prompt">{{Prompt}}</div>\n'
            '{{#Context}}<div class="context">{{Context}}</div>{{/Context}}\n'
            "{{tts de_DE voices=AwesomeTTS:Prompt}}"
        ),
        "Back": (
            "{{FrontSide}}\n"
            '<hr id="answer">\n'
            '<div class="response">{{Response}}</div>\n'
            '{{#Sources}}<div class="sources">{{Sources}}</div>{{/Sources}}'
        ),
    }
}
DEFAULT_CSS = """.card {
  font-family: "Inter", "Segoe UI", sans-serif;
  font-size: 22px;
  text-align: left;
  line-height: 1.5;
}
.prompt {
  font-weight: 600;
  font-size: 24px;
  margin-bottom: 12px;
}
.context {
  color: #4a5568;
  font-style: italic;
  margin-bottom: 16px;
}
.response {
  color: #1a202c;
  font-size: 22px;
  margin-bottom: 12px;
}
.sources {
  color: #2d3748;
  font-size: 18px;
  white-space: pre-wrap;
}"""


@dataclass(frozen=True)
class NoteModel:
    """A note type as `anki.model_info` shows it."""

    name: str
    fields: tuple[str, ...]
    templates: dict[str, dict[str, str]] = field(default_factory=dict)
    styling: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "model": self.name,
            "fields": list(self.fields),
            "templates": self.templates,
            "styling": self.styling,
        }

    def field_named(self, name: str) -> str | None:
        """The model's spelling of `name`, matched case-insensitively; None when absent."""
        wanted = name.strip().casefold()
        return next((f for f in self.fields if f.casefold() == wanted), None)

    def back_field(self) -> str | None:
        """The first field the first card shows on its back and not on its front, or None.

        For «Поля для ChatGPT» it is Response; for Basic, Back.
        """
        sides = next(iter(self.templates.values()), {})
        front = set(self._shown(sides.get("Front", "")))
        return next((f for f in self._shown(sides.get("Back", "")) if f not in front), None)

    def cloze_missing(self, fields: Mapping[str, str]) -> str | None:
        """The field a cloze note must hold a deletion in, when `fields` (names in any
        case) hold none where the model's `{{cloze:…}}` templates read them; None for a
        note that has one, or a model that is no cloze. Anki refuses such a note without
        saying why."""
        cloze = [
            self.field_named(tag.split(":")[-1].strip())
            for sides in self.templates.values()
            for tag in TEMPLATE_TAG.findall(sides.get("Front", ""))
            if "cloze" in (part.strip().casefold() for part in tag.split(":")[:-1])
        ]
        if not any(cloze):
            return None
        if any(CLOZE_DELETION.search(v) for n, v in fields.items() if self.field_named(n) in cloze):
            return None
        wanted = next(name for name in cloze if name)
        return next((n for n in fields if self.field_named(n) == wanted), wanted)

    def _shown(self, template: str) -> list[str]:
        """The model's fields a template shows, in order (`{{F}}`, `{{#F}}`, `{{text:F}}`)."""
        shown = []
        for tag in TEMPLATE_TAG.findall(template):
            name = tag.strip().lstrip("#^").split(":")[-1].strip()
            if tag.strip().startswith(("/", "!")) or name.casefold() in SPECIAL_FIELDS:
                continue
            named = self.field_named(name)
            if named is not None and named not in shown:
                shown.append(named)
        return shown


DEFAULT_MODEL = NoteModel(
    name=DEFAULT_MODEL_NAME,
    fields=DEFAULT_FIELDS,
    templates=DEFAULT_TEMPLATES,
    styling=DEFAULT_CSS,
)


def fields_normalize(
    model: NoteModel, fields: Mapping[str, str]
) -> tuple[dict[str, str], list[str]]:
    """`fields` on the model's names and order (missing ones empty) and unknown-name warnings.

    Names match case-insensitively; when two given names land on one field their values
    are joined with a blank line rather than one being lost.
    """
    out = dict.fromkeys(model.fields, "")
    warnings: list[str] = []
    for name, value in fields.items():
        target = model.field_named(name)
        if target is None:
            warnings.append(
                f"unknown_field: {name!r} is not a field of «{model.name}» "
                f"({', '.join(model.fields)}); its value was not sent"
            )
        elif out[target]:
            out[target] = f"{out[target]}\n\n{value}" if value else out[target]
        else:
            out[target] = value
    return out, warnings
