"""REST endpoints of this app, mounted at /api/problems/."""

from django.urls import URLPattern, URLResolver

app_name = "problems"
urlpatterns: list[URLPattern | URLResolver] = []
