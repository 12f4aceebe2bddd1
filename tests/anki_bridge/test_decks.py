"""`anki.decks` (issue 29, item 1): the deck tree with today's counts, equal to what the
stand-in's Anki collection (Anki's own scheduler) reports, asked through the SDK client
of a `manage.py runmcp` spawned over stdio."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from anki.consts import CARD_TYPE_REV, QUEUE_TYPE_REV
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.anki_bridge.ankiconnect_server import FakeAnki
from tests.conftest import MANAGE, PYTHON, ROOT, STARTUP_DEADLINE, subprocess_env, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.django_db(transaction=True)]

DECKS = {
    "Математика": ["Производная x²", "Интеграл 1/x", "Предел sin x / x"],
    "Математика::Геометрия": ["Площадь круга", "Теорема Пифагора"],
    "Физика": ["Второй закон Ньютона", "Закон Ома"],
    "English": ["to be", "to have"],
}


def runmcp(anki: FakeAnki, database: dict[str, str] | None = None) -> StdioServerParameters:
    """`manage.py runmcp` of the Anki tools, spawned over stdio, on the stand-in; on the
    test database when given (`subprocess_db_env`: a test that reads what it wrote)."""
    return StdioServerParameters(
        command=PYTHON,
        args=[MANAGE, "runmcp", "--apps", "anki_bridge"],
        cwd=str(ROOT),
        env=subprocess_env(ANKI_CONNECT_URL=anki.url, **(database or {})),
    )


def study_material(anki: FakeAnki) -> None:
    """Notes in four decks (one a subdeck), and cards in every state: new, in learning
    (answered «Again»), due for review today, and a review not due yet."""
    with anki.state.lock:
        col = anki.state.col
        basic = col.models.by_name("Basic")
        for deck, fronts in DECKS.items():
            deck_id = col.decks.id(deck)
            for front in fronts:
                note = col.new_note(basic)
                note["Front"], note["Back"] = front, f"ответ: {front}"
                col.add_note(note, deck_id)
        cards = {col.get_card(cid).note()["Front"]: col.get_card(cid) for cid in col.find_cards("")}
        for front in ("Площадь круга", "Второй закон Ньютона", "to be"):
            review = cards[front]
            review.type, review.queue = CARD_TYPE_REV, QUEUE_TYPE_REV
            review.ivl, review.due = 3, col.sched.today  # due today
            col.update_card(review)
        later = cards["to have"]
        later.type, later.queue = CARD_TYPE_REV, QUEUE_TYPE_REV
        later.ivl, later.due = 10, col.sched.today + 5  # not due today
        col.update_card(later)
        learner = cards["Закон Ома"]
        learner.start_timer()  # as the reviewer does when it shows the card
        col.sched.answerCard(learner, 1)  # «Again»: in learning


def anki_deck_list(anki: FakeAnki) -> list[dict[str, Any]]:
    """The deck list as Anki's scheduler counts it, in its order (a parent first)."""
    with anki.state.lock:
        col = anki.state.col
        out: list[dict[str, Any]] = []

        def walk(node: Any, level: int) -> None:
            for child in node.children:
                name = col.decks.name(child.deck_id)
                out.append({
                    "name": name, "id": child.deck_id, "level": level,
                    "new": child.new_count, "learning": child.learn_count,
                    "review": child.review_count,
                    "due_today": child.learn_count + child.review_count,
                    "total": child.total_including_children,
                })  # fmt: skip
                walk(child, level + 1)

        walk(col.sched.deck_due_tree(), 0)
        return out


async def test_with_anki_closed_the_deck_list_names_anki(settings) -> None:  # type: ignore[no-untyped-def]
    from core.mcp_server import build_server
    from tests.conftest import free_port

    settings.ANKI_CONNECT_URL = f"http://127.0.0.1:{free_port()}"  # nothing listens
    async with Client(build_server(["anki_bridge"]), read_timeout_seconds=60) as client:
        result = await client.call_tool("anki.decks", {})
    assert result.is_error
    assert "Anki" in text_of(result)


def history(anki: FakeAnki) -> None:
    """Answers in the review log: a review card passed today, one failed today (it goes
    back to relearning), one passed ten days ago; and a suspended new card."""
    with anki.state.lock:
        col = anki.state.col
        cards = {col.get_card(cid).note()["Front"]: col.get_card(cid) for cid in col.find_cards("")}
        for front, ease in (("Площадь круга", 3), ("Второй закон Ньютона", 1)):
            card = cards[front]
            card.start_timer()
            col.sched.answerCard(card, ease)
        ten_days_ago = int(time.time() * 1000) - 10 * 86_400_000
        col.db.execute(
            "insert into revlog (id, cid, usn, ease, ivl, lastIvl, factor, time, type) "
            "values (?, ?, -1, 3, 10, 5, 2500, 4000, 1)",
            ten_days_ago,
            cards["to have"].id,
        )
        col.sched.suspend_cards([cards["Интеграл 1/x"].id])


def anki_stats(anki: FakeAnki, deck: str | None) -> dict[str, Any]:
    """The statistics read straight off the collection's tables, by the definitions of
    Anki's own searches (rslib's SQL writer): new is type 0, learning queue 1 or 3, review
    type 2 or 3 and not learning, suspended queue -1."""
    with anki.state.lock:
        col = anki.state.col
        if deck is None:
            dids = [d.id for d in col.decks.all_names_and_ids()]
        else:
            dids = [d.id for d in col.decks.all_names_and_ids()
                    if d.name == deck or d.name.startswith(f"{deck}::")]  # fmt: skip
        where = f"did in ({','.join(map(str, dids))})"

        def count(sql: str, *args: Any) -> int:
            query = f"select count() from cards where {where} and {sql}"  # noqa: S608
            return int(col.db.scalar(query, *args))

        today = col.sched.today
        cutoff = (col.sched.day_cutoff - 86400) * 1000
        now = int(time.time() * 1000)
        in_scope = f"cid in (select id from cards where {where})"  # noqa: S608
        logs = col.db.all(f"select id, ease from revlog where type = 1 and {in_scope}")  # noqa: S608

        def kept(days: int) -> dict[str, Any]:
            answers = [ease for rid, ease in logs if rid > now - days * 86_400_000]
            passed = sum(1 for ease in answers if ease >= 2)
            return {
                "reviews": len(answers),
                "passed": passed,
                "rate": round(passed / len(answers), 4) if answers else None,
            }

        return {
            "deck": deck,
            "cards": {
                "new": count("type = 0"),
                "learning": count("queue in (1, 3)"),
                "review": count("type in (2, 3) and queue not in (1, 3)"),
                "suspended": count("queue = -1"),
                "total": count("1"),
            },
            "studied_today": int(
                col.db.scalar(
                    f"select count(distinct cid) from revlog where id > ? and {in_scope}",  # noqa: S608
                    cutoff,
                )
            ),
            "retention_7_days": kept(7),
            "retention_30_days": kept(30),
            "due_by_day": [len(col.find_cards(f"({' or '.join(f'did:{d}' for d in dids)}) is:due"))]
            + [count("queue in (2, 3) and due = ?", today + day) for day in range(1, 14)],
        }


async def test_the_deck_list_and_the_statistics_are_ankis_own(
    anki: FakeAnki, subprocess_db_env: dict[str, str]
) -> None:
    """`anki.decks` equals the scheduler's deck tree (a parent counting its subdecks, the
    empty «Default» hidden); `anki.stats` equals the collection's own tables, for the
    collection and for a deck with its subdeck; an unknown deck is refused, not made."""
    study_material(anki)
    listed = anki_deck_list(anki)
    assert {d["name"] for d in listed} == set(DECKS)  # the empty «Default» is hidden
    by_name = {d["name"]: d for d in listed}
    assert by_name["Физика"]["learning"] == 1
    assert by_name["Физика"]["review"] == 1
    assert by_name["Математика"]["review"] == 1  # its subdeck's card counts in it
    assert by_name["English"]["total"] == 2
    history(anki)
    expected_decks = anki_deck_list(anki)
    whole, maths = anki_stats(anki, None), anki_stats(anki, "Математика")
    assert whole["cards"]["suspended"] == 1
    assert whole["studied_today"] == 3  # two answered now, «Закон Ома» earlier today
    assert whole["retention_7_days"] == {"reviews": 2, "passed": 1, "rate": 0.5}
    assert whole["retention_30_days"]["reviews"] == 3
    assert sum(whole["due_by_day"][1:]) >= 2  # the passed review, and «to have» in 5 days
    assert maths["cards"]["total"] == 5  # with its subdeck

    async with Client(
        runmcp(anki, subprocess_db_env), read_timeout_seconds=STARTUP_DEADLINE
    ) as client:
        decks = await client.call_tool("anki.decks", {})
        collection = await client.call_tool("anki.stats", {})
        deck = await client.call_tool("anki.stats", {"deck": "Математика"})
        missing = await client.call_tool("anki.stats", {"deck": "Химия"})
    assert not decks.is_error, text_of(decks)
    assert json.loads(text_of(decks))["decks"] == expected_decks
    assert decks.structured_content == {"decks": expected_decks}
    assert not collection.is_error, text_of(collection)
    assert json.loads(text_of(collection)) == without_nulls(whole)
    assert json.loads(text_of(deck)) == without_nulls(maths)
    assert missing.is_error
    assert "deck" in text_of(missing)
    assert "Химия" in text_of(missing)
    with anki.state.lock:  # asking about a deck that does not exist made none
        assert "Химия" not in anki.state.col.decks.all_names()


def without_nulls(value: Any) -> Any:
    """As the tools answer: a value that is absent (null) is left out."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    return value


async def test_find_notes_pages_through_250_notes_with_exact_totals(
    anki: FakeAnki, subprocess_db_env: dict[str, str]
) -> None:
    """250 notes: pages of 100 come with the exact total and whether more follow; a long
    field comes shortened and named; a search Anki cannot read is refused naming `query`."""
    with anki.state.lock:
        col = anki.state.col
        basic = col.models.by_name("Basic")
        deck_id = col.decks.id("Словарь")
        for i in range(250):
            note = col.new_note(basic)
            note["Front"] = f"слово {i:03d}"
            note["Back"] = "длинное толкование " * 40 if i == 7 else f"перевод {i}"
            col.add_note(note, deck_id)
        expected = sorted(col.find_notes("deck:Словарь"))

    pages = []
    async with Client(
        runmcp(anki, subprocess_db_env), read_timeout_seconds=STARTUP_DEADLINE
    ) as client:
        for offset in (0, 100, 200, 300):
            result = await client.call_tool(
                "anki.find_notes", {"query": "deck:Словарь", "limit": 100, "offset": offset}
            )
            assert not result.is_error, text_of(result)
            pages.append(json.loads(text_of(result)))
        unreadable = await client.call_tool("anki.find_notes", {"query": '"deck:Словарь'})
    assert [p["total"] for p in pages] == [250] * 4
    assert [p["has_more"] for p in pages] == [True, True, False, False]
    assert [len(p["notes"]) for p in pages] == [100, 100, 50, 0]
    assert [n["noteId"] for p in pages for n in p["notes"]] == expected
    first = pages[0]["notes"]
    assert first[0]["fields"]["Front"] == "слово 000"
    assert first[0]["deckName"] == "Словарь"
    assert first[7]["shortened"] == ["Back"]
    assert len(first[7]["fields"]["Back"]) == 501
    assert first[7]["fields"]["Back"].endswith("…")
    assert "shortened" not in first[8]
    assert unreadable.is_error
    assert "query" in text_of(unreadable)


async def test_delete_notes_deletes_only_with_the_token_and_exactly_the_listed_notes(
    anki: FakeAnki, subprocess_db_env: dict[str, str]
) -> None:
    """The first call deletes nothing and lists what would go; the token deletes exactly
    those notes; a token for other notes, a forged one and no token delete nothing."""
    study_material(anki)
    with anki.state.lock:
        col = anki.state.col
        physics = sorted(col.find_notes("deck:Физика"))
        english = sorted(col.find_notes("deck:English"))
        before = len(col.find_notes(""))

    def notes_left() -> int:
        with anki.state.lock:
            return len(anki.state.col.find_notes(""))

    async with Client(
        runmcp(anki, subprocess_db_env), read_timeout_seconds=STARTUP_DEADLINE
    ) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["anki.delete_notes"].annotations.destructive_hint is not False
        first = await client.call_tool("anki.delete_notes", {"note_ids": physics})
        assert not first.is_error, text_of(first)
        listed = json.loads(text_of(first))
        assert notes_left() == before  # nothing deleted yet
        assert [n["noteId"] for n in listed["would_delete"]] == physics
        assert {n["deckName"] for n in listed["would_delete"]} == {"Физика"}
        token = listed["confirm_token"]

        other = await client.call_tool(
            "anki.delete_notes", {"note_ids": english, "confirm_token": token}
        )
        forged = await client.call_tool(
            "anki.delete_notes", {"note_ids": physics, "confirm_token": token[:-4] + "AAAA"}
        )
        assert other.is_error
        assert "confirm_token" in text_of(other)
        assert forged.is_error
        assert "confirm_token" in text_of(forged)
        assert notes_left() == before

        done = await client.call_tool(
            "anki.delete_notes", {"note_ids": physics, "confirm_token": token}
        )
        assert not done.is_error, text_of(done)
        assert json.loads(text_of(done))["deleted"] == physics
    with anki.state.lock:
        col = anki.state.col
        assert col.find_notes("deck:Физика") == []
        assert sorted(col.find_notes("deck:English")) == english
        assert len(col.find_notes("")) == before - len(physics)


def test_a_delete_token_is_the_users_who_asked_and_expires(anki: FakeAnki, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from anki_bridge import notes, services
    from core.exceptions import InvalidInput

    study_material(anki)
    with anki.state.lock:
        ids = sorted(anki.state.col.find_notes("deck:English"))
    token = services.notes_delete(note_ids=ids, confirm_token=None, user_id=1).confirm_token
    with pytest.raises(InvalidInput, match="another user"):
        services.notes_delete(note_ids=ids, confirm_token=token, user_id=2)
    monkeypatch.setattr(notes, "DELETE_CONFIRM_SECONDS", -1)  # where it is read
    with pytest.raises(InvalidInput, match="expired"):
        services.notes_delete(note_ids=ids, confirm_token=token, user_id=1)
    with anki.state.lock:
        assert sorted(anki.state.col.find_notes("deck:English")) == ids


async def test_reschedule_makes_the_cards_due_in_n_days(
    anki: FakeAnki, subprocess_db_env: dict[str, str]
) -> None:
    """New and review cards set due in 4 days are due in 4 days by Anki's own count; an
    id Anki does not hold is named, and the other cards keep their dates."""
    study_material(anki)
    with anki.state.lock:
        col = anki.state.col
        chosen = sorted(col.find_cards("deck:Физика"))  # a new card and a review card
        untouched = {cid: col.get_card(cid).due for cid in col.find_cards("deck:English")}
    async with Client(
        runmcp(anki, subprocess_db_env), read_timeout_seconds=STARTUP_DEADLINE
    ) as client:
        result = await client.call_tool(
            "anki.reschedule", {"card_ids": [*chosen, 999_999], "days": 4}
        )
        bad = await client.call_tool("anki.reschedule", {"card_ids": chosen, "days": -1})
    assert not result.is_error, text_of(result)
    assert json.loads(text_of(result)) == {
        "due_in_days": 4,
        "rescheduled": chosen,
        "missing": [999_999],
    }
    with anki.state.lock:
        col = anki.state.col
        assert sorted(col.find_cards("prop:due=4")) == chosen
        today = col.sched.today
        assert {col.get_card(cid).due for cid in chosen} == {today + 4}
        assert {cid: col.get_card(cid).due for cid in untouched} == untouched
    assert bad.is_error
    assert "days" in text_of(bad)


@pytest.mark.parametrize(
    ("deck", "rule"),
    [
        ("Trail::", "an empty part between «::»"),
        ("::Lead", "an empty part between «::»"),
        ("A::::B", "an empty part between «::»"),
        ("x\ny", "a control character"),
        ("tab\there", "a control character"),
    ],
)
def test_a_deck_name_anki_would_rename_is_refused_naming_the_rule(deck: str, rule: str) -> None:
    """Anki filed «Trail::» as «Trail::blank» and the note was «ok»; a review of «Trail::»
    then found no deck."""
    from anki_bridge.decks import deck_resolve
    from core.exceptions import InvalidInput

    with pytest.raises(InvalidInput, match=rule) as refused:
        deck_resolve(deck)
    assert refused.value.field == "deck"


def test_spaces_around_a_subdecks_mark_are_dropped_as_anki_drops_them() -> None:
    from anki_bridge.decks import deck_resolve

    assert deck_resolve(" Физика :: Механика ") == "Физика::Механика"
