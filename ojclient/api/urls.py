"""REST endpoints of the online-judge client, mounted at /api/oj/."""

from django.urls import path

from ojclient.api import views

app_name = "ojclient"
urlpatterns = [
    path("daily/", views.DailyApi.as_view(), name="daily"),
    path("stored-problems/", views.StoredProblemListApi.as_view(), name="stored-problems"),
    path("problems/<str:source>/<path:problem_id>/", views.ProblemApi.as_view(), name="problem"),
    path("similar/", views.SimilarApi.as_view(), name="similar"),
    path("resolve/", views.ResolveApi.as_view(), name="resolve"),
    path("status/", views.StatusApi.as_view(), name="status"),
]
