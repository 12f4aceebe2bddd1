"""REST endpoints of this app, mounted at /api/anki/."""

from django.urls import path

from anki_bridge.api import views

app_name = "anki_bridge"
urlpatterns = [
    path("notes/", views.NoteListCreateApi.as_view(), name="notes"),
]
