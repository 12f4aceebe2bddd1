"""Fixtures of the norms agent tests: media in a temp dir, the demo corpus, the scripted model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.normagpt.scripted_llm import ScriptedLLM


@pytest.fixture(autouse=True)
def normagpt_settings(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Private media, fast retries, no OCR unless a test asks."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.NORMAGPT_LLM_BACKOFF = 0.01
    settings.NORMAGPT_LLM_TIMEOUT = 5
    settings.NORMAGPT_RUN_LEASE_SECONDS = 30
    settings.NORMAGPT_VISION = False


@pytest.fixture
def corpus(tmp_path: Path, django_db_blocker) -> list:  # type: ignore[no-untyped-def]
    from normagpt.demo import demo_corpus_load

    directory = tmp_path / "pdf"
    directory.mkdir()
    return demo_corpus_load(directory=directory)


@pytest.fixture
def user(db):  # type: ignore[no-untyped-def]
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("engineer", password="pw-123456")


@pytest.fixture
def staff(db):  # type: ignore[no-untyped-def]
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_superuser("reviewer", password="pw-123456")


@pytest.fixture
def llm(settings) -> Iterator[ScriptedLLM]:  # type: ignore[no-untyped-def]
    server = ScriptedLLM()
    settings.OPENAI_BASE_URL = server.base_url
    settings.OPENAI_API_KEY = "test"
    yield server
    server.close()


@pytest.fixture(autouse=True)
def background_work_finished() -> Iterator[None]:
    """Runs started in-process (no broker) end before the test's database goes away."""
    from core import background

    yield
    background.drain(timeout=20)
