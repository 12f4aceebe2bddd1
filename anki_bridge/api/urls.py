"""REST endpoints of this app, mounted at /api/anki_bridge/."""

from django.urls import URLPattern, URLResolver

app_name = "anki_bridge"
urlpatterns: list[URLPattern | URLResolver] = []
