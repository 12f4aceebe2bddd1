"""The project's URLs plus the normagpt pages (until config/urls.py includes them)."""

from django.urls import include, path

from config.urls import urlpatterns as project

urlpatterns = [*project, path("normagpt/", include("normagpt.urls"))]
