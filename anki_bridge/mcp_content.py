"""The Anki bridge beyond tools: a deck as a resource, the review loop as a prompt,
completion of deck and note type names (registered on the app's registry in
`anki_bridge.mcp_tools`)."""

from __future__ import annotations

from anki_bridge import services
from anki_bridge.client import AnkiClient
from core.mcp_content import NumberSlot, prompt_step, prompt_text
from core.registry import ToolRegistry

COMPLETION_TIMEOUT = 2.0  # seconds Anki has to name its decks while someone types


def register(registry: ToolRegistry) -> None:
    registry.resource("anki://deck/{name}", name="anki_deck", title="Anki deck")(deck_resource)
    registry.prompt(name="review_session", title="Review an Anki deck")(review_session)
    registry.completer("deck")(deck_complete)
    registry.completer("model")(model_complete)


def deck_resource(name: str) -> str:
    """A deck: today's counts (new, learning, review, due) and its ten newest notes."""
    return services.deck_described(name=name)


def review_session(deck: str, include_new: str = "no", language: str = "ru") -> str:
    """Review a deck's due cards with the learner, card by card. Arguments: deck;
    include_new (yes/no); language (ru/en)."""
    new = include_new.strip().lower() in {"yes", "да", "true", "1"}
    steps = [
        prompt_step("anki.review_start", {"deck": deck, "include_new": new}),
        prompt_step(
            "anki.review_next",
            {"session": "<session>"},
            "покажи ученику лицевую сторону и дождись его ответа; сам ответ не подсказывай"
            if language != "en"
            else "show the learner the front and wait for their answer; do not hint at it",
        ),
        prompt_step(
            "anki.review_reveal",
            {"session": "<session>", "card": NumberSlot("<card>")},
            "сравни ответ ученика с оборотом и скажи, что верно и что нет"
            if language != "en"
            else "compare the learner's answer with the back: say what was right and wrong",
        ),
        prompt_step(
            "anki.review_rate",
            {"session": "<session>", "card": NumberSlot("<card>"), "ease": NumberSlot("<1–4>")},
            "оценку выбирает ученик (1 снова, 2 трудно, 3 хорошо, 4 легко); затем снова шаг 2"
            if language != "en"
            else "the learner picks it (1 again, 2 hard, 3 good, 4 easy); then step 2 again",
        ),
    ]
    return prompt_text(
        language,
        ru=f"Проведи повторение колоды «{deck}» в Anki вместе с учеником. Шаги:",
        en=f"Review the Anki deck «{deck}» with the learner. Steps:",
        steps=steps,
        end_ru="Когда review_next ответит done, подведи итог: сколько карточек и с какими "
        "оценками.",
        end_en="When review_next answers done, sum up: how many cards, with which ratings.",
    )


def deck_complete(value: str, context: dict[str, str]) -> list[str]:
    """Anki's deck names that start with (or contain) what was typed; none while Anki is closed."""
    with AnkiClient(timeout=COMPLETION_TIMEOUT) as anki:
        return _matching(value, anki.deck_names())


def model_complete(value: str, context: dict[str, str]) -> list[str]:
    """Anki's note type names matching what was typed; none while Anki is closed."""
    with AnkiClient(timeout=COMPLETION_TIMEOUT) as anki:
        return _matching(value, anki.model_names())


def _matching(typed: str, names: list[str]) -> list[str]:
    folded = typed.casefold()
    starting = sorted(name for name in names if name.casefold().startswith(folded))
    return starting + sorted(n for n in names if folded in n.casefold() and n not in starting)
