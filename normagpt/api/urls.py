"""REST endpoints of this app, mounted at /api/normagpt/."""

from django.urls import URLPattern, URLResolver

app_name = "normagpt"
urlpatterns: list[URLPattern | URLResolver] = []
