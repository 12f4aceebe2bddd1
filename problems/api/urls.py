"""REST endpoints of the problem bank, mounted at /api/problems/."""

from django.urls import path

from problems.api import views

app_name = "problems"
urlpatterns = [
    path("", views.ProblemListApi.as_view(), name="problem-list"),
    path("variants/", views.VariantListApi.as_view(), name="variant-list"),
    path("variants/<str:public_id>/", views.VariantDetailApi.as_view(), name="variant-detail"),
    path("variants/<str:public_id>/pdf/", views.VariantPdfApi.as_view(), name="variant-pdf"),
    path("variants/<str:public_id>/check/", views.VariantCheckApi.as_view(), name="variant-check"),
    path("<str:subject>/<str:exam>/variants/", views.VariantMakeApi.as_view(), name="variant-make"),
    path("<str:subject>/<str:exam>/catalog/", views.CatalogApi.as_view(), name="catalog"),
    path("<str:subject>/<str:exam>/search/", views.SearchApi.as_view(), name="search"),
    path(
        "<str:subject>/<str:exam>/search-by-text/",
        views.FuzzySearchApi.as_view(),
        name="search-by-text",
    ),
    path(
        "<str:subject>/<str:exam>/search-by-image/",
        views.ImageSearchApi.as_view(),
        name="search-by-image",
    ),
    path("<str:subject>/<str:exam>/batch/", views.ProblemBatchApi.as_view(), name="batch"),
    path(
        "<str:subject>/<str:exam>/categories/<str:category_id>/",
        views.CategoryProblemsApi.as_view(),
        name="category",
    ),
    path("<str:subject>/<str:exam>/tests/<str:test_id>/", views.ExamTestApi.as_view(), name="test"),
    path(
        "<str:subject>/<str:exam>/<str:problem_id>/",
        views.ProblemDetailApi.as_view(),
        name="problem-detail",
    ),
]
