"""Public ids never start with «-»: a command line would read such an id as an option."""

from __future__ import annotations

import pytest

from anki_bridge.models import _package_id, _session_id
from core import ids
from normagpt.models.agent import run_public_id
from problems.models import _variant_id


@pytest.mark.parametrize("make", [run_public_id, _variant_id, _session_id, _package_id])
def test_an_id_that_would_start_with_a_dash_is_drawn_again(make, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    drawn = iter(["-0WMeUiHur2wWlpOr9uIDg", "A0WMeUiHur2wWlpOr9uIDg"])
    monkeypatch.setattr(ids.secrets, "token_urlsafe", lambda nbytes: next(drawn))
    assert make() == "A0WMeUiHur2wWlpOr9uIDg"


def test_ids_are_random_url_safe_text_of_the_asked_size() -> None:
    made = {ids.random_id(16) for _ in range(500)}
    assert len(made) == 500
    assert all(len(made_id) == 22 and not made_id.startswith("-") for made_id in made)
