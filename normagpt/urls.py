"""Pages of the norms agent, mounted at /normagpt/."""

from django.contrib.auth import views as auth_views
from django.urls import path

from normagpt import views

app_name = "normagpt"
urlpatterns = [
    path("", views.in_russian(views.index), name="index"),
    path(
        "login/",
        views.in_russian(auth_views.LoginView.as_view(template_name="normagpt/login.html")),
        name="login",
    ),
    path("runs/<slug:run_id>/", views.in_russian(views.run_detail), name="run"),
    path("runs/<slug:run_id>/live/", views.in_russian(views.run_fragment), name="run-live"),
    path("pages/<int:page_id>/", views.in_russian(views.page_detail), name="page"),
    path("pages/<int:page_id>/image/", views.page_image, name="page-image"),
]
