"""The REST adapter (POST notes, GET the journal), the admin and the error mapping."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from rest_framework.test import APIClient

from anki_bridge import services
from anki_bridge.models import Note
from tests.anki_bridge.ankiconnect_server import FakeAnki

pytestmark = pytest.mark.django_db

URL = "/api/anki/notes/"


@pytest.fixture
def user() -> User:
    return User.objects.create_superuser("admin", "a@example.com", "pw")


@pytest.fixture
def api(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_url_is_mounted() -> None:
    assert reverse("anki_bridge:notes") == URL


def test_anonymous_callers_can_neither_add_nor_read() -> None:
    client = APIClient()
    assert client.post(URL, {"items": [{"Prompt": "q"}]}, format="json").status_code in (401, 403)
    assert client.get(URL).status_code in (401, 403)


def test_post_adds_notes_with_the_add_from_model_contract(api: APIClient, anki: FakeAnki) -> None:
    response = api.post(
        URL,
        {"deck": "API", "items": [{"Prompt": "q", "tags": ["api"], "dedup_key": "api-1"}]},
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["added"] == 1
    assert body["details"][0]["dedup_key"] == "api-1"
    (note,) = anki.notes()
    assert note["decks"] == ["API"]
    assert Note.objects.get().source == "api"


def test_bad_input_and_a_closed_anki_map_to_the_error_shape(api: APIClient, anki: FakeAnki) -> None:
    response = api.post(URL, {"items": [{"Prompt": ["x"]}]}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid_input",
        "message": "items[0].Prompt: a field value must be a string",
        "extra": {"field": "items[0].Prompt"},
    }
    assert api.post(URL, {"items": []}, format="json").status_code == 400
    anki.stop()
    queued = api.post(URL, {"items": [{"Prompt": "later"}]}, format="json").json()
    assert queued["details"][0]["status"] == "queued"


def test_get_lists_the_journal_filtered_by_status_and_deck(api: APIClient, anki: FakeAnki) -> None:
    services.notes_add_from_model(items=[{"Prompt": "a"}], deck="One")
    anki.stop()
    services.notes_add_from_model(items=[{"Prompt": "b"}], deck="Two")
    everything = api.get(URL).json()
    assert everything["count"] == 2
    pending = api.get(URL, {"status": "pending"}).json()["results"]
    assert [(n["deck"], n["fields"]["Prompt"]) for n in pending] == [("Two", "b")]
    assert api.get(URL, {"deck": "One"}).json()["results"][0]["status"] == "sent"
    assert api.get(URL, {"status": "bogus"}).status_code == 400


def test_a_user_lists_their_own_notes_and_staff_list_every_users(anki: FakeAnki) -> None:
    alice = User.objects.create_user("alice", password="pw")
    bob = User.objects.create_user("bob", password="pw")
    staff = User.objects.create_user("staff", password="pw", is_staff=True)

    def client_of(user: User) -> APIClient:
        client = APIClient()
        client.force_authenticate(user)
        return client

    assert (
        client_of(alice).post(URL, {"items": [{"Prompt": "alice's"}]}, format="json").status_code
        == 200
    )
    assert (
        client_of(bob).post(URL, {"items": [{"Prompt": "bob's"}]}, format="json").status_code == 200
    )
    services.notes_add_from_model(items=[{"Prompt": "a tool's"}])  # MCP: no user

    def prompts(user: User) -> list[str]:
        return sorted(n["fields"]["Prompt"] for n in client_of(user).get(URL).json()["results"])

    assert prompts(alice) == ["alice's"]
    assert prompts(bob) == ["bob's"]
    assert prompts(staff) == ["a tool's", "alice's", "bob's"]
    assert client_of(alice).get(URL, {"deck": "Default"}).json()["count"] == 1
    assert Note.objects.get(fields__Prompt="alice's").owner == alice


def test_one_users_dedup_key_is_no_answer_for_anothers_note(anki: FakeAnki) -> None:
    """Keys are each user's own: bob's note under the key alice used is added, and neither
    hears of the other's note."""
    alice = User.objects.create_user("alice", password="pw")
    bob = User.objects.create_user("bob", password="pw")

    def post(user: User, prompt: str) -> dict:
        client = APIClient()
        client.force_authenticate(user)
        body = {"deck": "Keys", "items": [{"Prompt": prompt, "dedup_key": "k2"}]}
        response = client.post(URL, body, format="json")
        assert response.status_code == 200, response.json()
        return response.json()["details"][0]

    alices = post(alice, "alice's")
    bobs = post(bob, "bob's")
    assert (alices["status"], bobs["status"]) == ("ok", "ok")
    assert bobs["noteId"] != alices["noteId"]
    again = post(alice, "alice's, again")
    assert (again["status"], again["noteId"]) == ("duplicate", alices["noteId"])
    assert sorted(n["fields"]["Prompt"] for n in anki.notes('"deck:Keys"')) == ["alice's", "bob's"]


def test_users_sharing_a_key_can_be_deleted_and_their_notes_stay(anki: FakeAnki) -> None:
    """A deleted user's notes stay, owned by no one: their keys are freed first (they
    would clash with the same key of another deleted user's, or of the tools'), and each
    note says which key it had."""
    services.notes_add_from_model(items=[{"Prompt": "the tool's", "dedup_key": "k"}])
    alice = User.objects.create_user("alice", password="pw")
    bob = User.objects.create_user("bob", password="pw")
    for user, prompt in ((alice, "alice's"), (bob, "bob's")):
        services.notes_add_from_model(items=[{"Prompt": prompt, "dedup_key": "k"}], owner=user.pk)
    alice.delete()
    bob.delete()
    kept = {n.fields["Prompt"]: n for n in Note.objects.all()}
    assert set(kept) == {"the tool's", "alice's", "bob's"}
    assert kept["the tool's"].dedup_key == "k"
    assert (kept["alice's"].owner, kept["alice's"].dedup_key) == (None, None)
    assert kept["bob's"].last_error == "dedup_key 'k' freed: its owner was deleted"


def test_the_list_takes_a_fixed_number_of_queries(
    api: APIClient, anki: FakeAnki, django_assert_num_queries
) -> None:  # type: ignore[no-untyped-def]
    anki.stop()
    services.notes_add_from_model(items=[{"Prompt": f"q{i}"} for i in range(30)])
    with django_assert_num_queries(2):  # the count and the page
        assert api.get(URL).json()["count"] == 30


def test_the_admin_filters_the_journal_and_sends_again(client, user: User, anki: FakeAnki) -> None:  # type: ignore[no-untyped-def]
    client.force_login(user)
    services.notes_add_from_model(items=[{"Response": "no prompt"}], deck="Admin")
    failed = Note.objects.get()
    assert failed.status == "failed"
    changelist = reverse("admin:anki_bridge_note_changelist")
    assert client.get(changelist, {"status__exact": "failed", "deck": "Admin"}).status_code == 200
    failed.fields = {**failed.fields, "Prompt": "fixed in the admin"}
    failed.save()
    response = client.post(
        changelist,
        {"action": "send_again", "_selected_action": [failed.pk]},
        follow=True,
    )
    assert response.status_code == 200
    assert "Отправлено: 1; дубликатов: 0; ошибок: 0." in response.content.decode()
    failed.refresh_from_db()
    assert failed.status == "sent"
    assert [n["fields"]["Prompt"] for n in anki.notes()] == ["fixed in the admin"]


def test_send_again_reports_a_closed_anki(client, user: User, anki: FakeAnki) -> None:  # type: ignore[no-untyped-def]
    client.force_login(user)
    anki.stop()
    services.notes_add_from_model(items=[{"Prompt": "waiting"}])
    note = Note.objects.get()
    response = client.post(
        reverse("admin:anki_bridge_note_changelist"),
        {"action": "send_again", "_selected_action": [note.pk]},
        follow=True,
    )
    assert "Anki is not reachable" in response.content.decode()
    note.refresh_from_db()
    assert note.status == "pending"


def test_a_journal_row_broken_by_hand_is_refused_and_stops_no_delivery(  # type: ignore[no-untyped-def]
    client, user: User, anki: FakeAnki
) -> None:
    """The admin refused no `fields` of `[1, 2]`: the changelist then answered 500 and every
    flush died on the row, so no user's queued note reached Anki."""
    client.force_login(user)
    add = reverse("admin:anki_bridge_note_add")
    form = {"deck": "Default", "model": "Поля для ChatGPT", "tags": "[]", "media": "[]"}
    for fields, tags in (("[1, 2]", "[]"), ('{"Prompt": {"x": 1}}', "[]"), ('{"P": "q"}', '"t"')):
        response = client.post(add, {**form, "fields": fields, "tags": tags})
        assert response.status_code == 200  # the form again, with its error
        assert "an object of texts" in response.content.decode() or "a list of texts" in (
            response.content.decode()
        )
    assert not Note.objects.exists()
    # a row broken in the database fails alone; the note queued beside it is delivered
    anki.stop()
    services.notes_add_from_model(items=[{"Prompt": "queued while Anki was away"}])
    broken = Note.objects.create(deck="Default", model="Поля для ChatGPT", fields=[1, 2])
    assert client.get(reverse("admin:anki_bridge_note_changelist")).status_code == 200
    anki.start()
    from anki_bridge.journal import notes_flush

    notes_flush()
    broken.refresh_from_db()
    assert broken.status == "failed"
    assert "fields: an object of texts" in broken.last_error
    assert [n["fields"]["Prompt"] for n in anki.notes()] == ["queued while Anki was away"]


def test_staff_who_may_only_view_run_no_action_that_changes_data(anki: FakeAnki) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.auth.models import Permission
    from django.test import Client

    viewer = User.objects.create_user("viewer", password="pw-123456", is_staff=True)
    viewer.user_permissions.set(
        Permission.objects.filter(codename__in=["view_note", "view_problem"])
    )
    anki.stop()
    services.notes_add_from_model(items=[{"Prompt": "waiting"}])
    note = Note.objects.get()
    client = Client()
    client.force_login(viewer)
    changelist = reverse("admin:anki_bridge_note_changelist")
    page = client.get(changelist).content.decode()
    assert 'value="send_again"' not in page
    assert 'value="export_package"' in page  # reading is viewing
    anki.start()
    client.post(changelist, {"action": "send_again", "_selected_action": [note.pk]})
    note.refresh_from_db()
    assert note.status == "pending"  # not sent by a viewer
    problems = client.get(reverse("admin:problems_problem_changelist")).content.decode()
    assert 'value="refresh_from_site"' not in problems
    assert 'value="fetch_analogs"' not in problems


def test_anki_open_with_no_profile_queues_the_notes_and_says_why(anki: FakeAnki) -> None:
    """Anki answers «collection is not available» until a profile is open: that is Anki
    away, not a refusal. The notes were failed (nothing journaled, never delivered)."""
    from anki_bridge.journal import notes_flush

    anki.state.profile_loaded = False
    result = services.notes_add_from_model(items=[{"Prompt": "до профиля"}], deck="Unavail")
    (detail,) = result.details
    assert detail.status == "queued"
    assert Note.objects.get().status == "pending"
    anki.state.profile_loaded = True
    notes_flush()
    assert [n["fields"]["Prompt"] for n in anki.notes()] == ["до профиля"]
    assert Note.objects.get().status == "sent"


def test_the_admin_refuses_a_dedup_key_the_owner_uses_already(client, user: User) -> None:  # type: ignore[no-untyped-def]
    Note.objects.create(deck="D", model="M", fields={"Prompt": "a"}, dedup_key="bulk1")
    client.force_login(user)
    response = client.post(
        reverse("admin:anki_bridge_note_add"),
        {"deck": "D", "model": "M", "fields": '{"Prompt": "b"}', "tags": "[]", "media": "[]",
         "dedup_key": "bulk1"},
    )  # fmt: skip
    assert response.status_code == 200  # the form again, not the database's 500
    assert "Этот ключ уже у другой заметки того же владельца." in response.content.decode()
    assert Note.objects.count() == 1


def test_the_journal_finds_a_deck_as_it_was_asked_and_as_anki_names_it(
    api: APIClient, anki: FakeAnki
) -> None:
    api.post(URL, {"deck": "Math :: Algebra", "items": [{"Prompt": "x²"}]}, format="json")
    assert Note.objects.get().deck == "Math::Algebra"  # as Anki keeps it
    for asked in ("Math :: Algebra", "math::algebra", "Math::Algebra"):
        assert api.get(URL, {"deck": asked}).json()["count"] == 1, asked
