"""Printed variants, mounted at /media/sheets/ (the signed links of problems.sheet_links)."""

from django.urls import path

from problems import views

urlpatterns = [path("", views.sheet_file, name="problems-sheet")]
