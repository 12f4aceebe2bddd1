"""REST endpoints of this app, mounted at /api/normagpt/."""

from django.urls import path

from normagpt.api import views

app_name = "normagpt_api"
urlpatterns = [
    path("runs/", views.RunListCreateApi.as_view(), name="run-list"),
    path("runs/<slug:run_id>/", views.RunDetailApi.as_view(), name="run-detail"),
    path("runs/<slug:run_id>/resume/", views.RunResumeApi.as_view(), name="run-resume"),
    path("runs/<slug:run_id>/reply/", views.RunReplyApi.as_view(), name="run-reply"),
    path("threads/", views.ThreadListApi.as_view(), name="thread-list"),
    path("threads/<slug:thread_id>/", views.ThreadDetailApi.as_view(), name="thread-detail"),
    path("documents/", views.DocumentListApi.as_view(), name="document-list"),
    path("documents/<int:pk>/", views.DocumentDetailApi.as_view(), name="document-detail"),
    path("documents/<int:pk>/pages/", views.DocumentPagesApi.as_view(), name="document-pages"),
    path("pages/<int:pk>/", views.PageDetailApi.as_view(), name="page-detail"),
    path("search/", views.SearchApi.as_view(), name="search"),
]
