"""REST endpoints of this app, mounted at /api/ojclient/."""

from django.urls import URLPattern, URLResolver

app_name = "ojclient"
urlpatterns: list[URLPattern | URLResolver] = []
