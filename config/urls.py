"""The project's URLs: pages, admin, and each app's REST API under /api/<app>/."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import obtain_auth_token

from config import views
from config.api import ApiRootApi, McpToolListApi
from normagpt.views import document_file

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("normagpt/", include("normagpt.urls")),
    # Uploaded norm PDFs, where `FileField.url` points (MEDIA_URL is not served otherwise).
    path("media/normagpt/documents/<str:name>", document_file, name="normagpt-document-file"),
    path("api/", ApiRootApi.as_view(), name="api-root"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/auth/token/", obtain_auth_token, name="api-token"),
    path("api/mcp-tools/", McpToolListApi.as_view(), name="api-mcp-tools"),
    path("api/problems/", include("problems.api.urls")),
    path("api/anki/", include("anki_bridge.api.urls")),
    path("api/oj/", include("ojclient.api.urls")),
    path("api/normagpt/", include("normagpt.api.urls")),
]

admin.site.site_header = "Tool hub"
admin.site.site_title = "Tool hub admin"
