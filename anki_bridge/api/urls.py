"""REST endpoints of this app, mounted at /api/anki/."""

from django.urls import path

from anki_bridge.api import views

app_name = "anki_bridge"
urlpatterns = [
    path("notes/", views.NoteListCreateApi.as_view(), name="notes"),
    path("packages/", views.PackageCreateApi.as_view(), name="packages"),
    path("packages/<str:public_id>/", views.PackageDownloadApi.as_view(), name="package"),
]
