"""The project's URLs: pages, admin, and each app's REST API under /api/<app>/."""

from django.contrib import admin
from django.urls import include, path
from django.utils.translation import gettext_lazy as _
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import ObtainAuthToken

from config import urls_pages, views
from config.api import ApiRootApi, McpToolListApi
from core.parsers import JSONParser

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    *urls_pages.urlpatterns,  # the pages answers link to (normagpt, media): LINKS_URLCONF
    path("api/", ApiRootApi.as_view(), name="api-root"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    # The project's parser, not the view's own stock JSON/form ones.
    path("api/auth/token/", ObtainAuthToken.as_view(parser_classes=[JSONParser]), name="api-token"),
    path("api/mcp-tools/", McpToolListApi.as_view(), name="api-mcp-tools"),
    path("api/problems/", include("problems.api.urls")),
    path("api/anki/", include("anki_bridge.api.urls")),
    path("api/oj/", include("ojclient.api.urls")),
    path("api/normagpt/", include("normagpt.api.urls")),
]

admin.site.site_header = _("Tool hub")
admin.site.site_title = _("Tool hub admin")
