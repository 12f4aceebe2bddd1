"""Use cases of the Anki bridge."""

from __future__ import annotations

from config.exceptions import InvalidInput


def greeting_make(*, name: str) -> str:
    """The seed's ping answer: `Привет, {name}! Я твой MCP-сервер.`"""
    name = name.strip()
    if not name:
        raise InvalidInput("name must not be empty or whitespace", field="name")
    return f"Привет, {name}! Я твой MCP-сервер."
