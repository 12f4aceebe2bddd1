"""Pages of the norms agent, mounted at /normagpt/."""

from django.contrib.auth import views as auth_views
from django.urls import path

from normagpt import views

app_name = "normagpt"
urlpatterns = [
    path("", views.index, name="index"),
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="normagpt/login.html"),
        name="login",
    ),
    path("threads/<slug:thread_id>/", views.thread_detail, name="thread"),
    path("runs/<slug:run_id>/", views.run_detail, name="run"),
    path("runs/<slug:run_id>/live/", views.run_fragment, name="run-live"),
    path("runs/<slug:run_id>/reply/", views.run_reply, name="run-reply"),
    path("pages/<int:page_id>/", views.page_detail, name="page"),
    path("pages/<int:page_id>/image/", views.page_image, name="page-image"),
]
