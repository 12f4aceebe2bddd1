"""Uploaded norm PDFs, mounted at /media/normagpt/ where `FileField.url` points.

MEDIA_URL is not served otherwise; only files a NormDocument holds are answered.
"""

from django.urls import path

from normagpt import views

urlpatterns = [
    path("documents/<str:name>", views.document_file, name="normagpt-document-file"),
]
