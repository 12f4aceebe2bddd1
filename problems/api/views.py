"""REST adapters of the problem bank: each view parses input, calls a service, formats."""

from __future__ import annotations

from typing import Any, TypeVar

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from pydantic import BaseModel, ValidationError
from rest_framework import generics
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from core.exceptions import InvalidInput
from core.throttling import UPSTREAM_ANON
from problems import catalog, formatting, fuzzy, photo, schemas, services, variants
from problems.api import serializers as s
from problems.models import Problem, Variant
from problems.sheet_copies import MAX_COPIES, SHEET_PARTS, copies_parse
from problems.sheet_links import sheet_link
from problems.subjects import Site, exam_resolve, site_resolve, subject_resolve

Q_MAX = 500  # a list's `q`: words of a condition

M = TypeVar("M", bound=BaseModel)
RULES = {"missing": "required", "extra_forbidden": "unknown field (not accepted)"}
SITE_PARAMS = [
    OpenApiParameter("subject", str, OpenApiParameter.PATH, description="Subject code or alias"),
    OpenApiParameter("exam", str, OpenApiParameter.PATH, description="ege or oge"),
]


def _query(serializer_class: type[Serializer], request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _body(model: type[M], request: Request) -> M:
    """The request body validated by the pydantic model its MCP tool validates with (one
    schema for both); InvalidInput naming each field and its rule otherwise."""
    try:
        return model.model_validate(request.data)
    except ValidationError as exc:
        raise _invalid(exc) from None


def _invalid(exc: ValidationError) -> InvalidInput:
    errors = [
        {
            "field": ".".join(str(part) for part in error["loc"]) or "body",
            "rule": RULES.get(error["type"], error["msg"]),
        }
        for error in exc.errors(include_url=False)
    ]
    message = "; ".join(f"{e['field']}: {e['rule']}" for e in errors)
    field = errors[0]["field"].split(".")[0]
    return InvalidInput(message, field=field, extra={"errors": errors})


class SiteView(APIView):
    permission_classes = (AllowAny,)
    throttle_scope = UPSTREAM_ANON  # may fetch from СДАМ ГИА

    def site(self) -> Site:
        return site_resolve(subject=self.kwargs["subject"], exam=self.kwargs["exam"])


@extend_schema(
    parameters=[
        OpenApiParameter("subject", str),
        OpenApiParameter("exam", str),
        OpenApiParameter("type", str, description="Task type number, e.g. 1"),
        OpenApiParameter("category", str, description="Category id"),
        OpenApiParameter("q", str, description="Text to look for in the condition"),
    ]
)
class ProblemListApi(generics.ListAPIView):
    """Stored problems, filtered; no network."""

    serializer_class = s.ProblemListSerializer
    permission_classes = (AllowAny,)

    def get_queryset(self) -> QuerySet[Problem]:
        params = self.request.query_params
        qs = Problem.objects.order_by("subject", "exam", "problem_id")
        # a subject or exam is read as everywhere else (an alias, «ЕГЭ»), an unknown one
        # refused naming it, not answered with an empty list
        subject, exam = params.get("subject"), params.get("exam")
        if subject and exam:  # a subject the exam has not is refused, as on every endpoint
            site = site_resolve(subject=subject, exam=exam)
            qs = qs.filter(subject=site.subject, exam=site.exam)
        elif subject:
            qs = qs.filter(subject=subject_resolve(subject))
        elif exam:
            qs = qs.filter(exam=exam_resolve(exam))
        # the site's numbers: a category's digits, a task's number («1», «Д1»)
        category, kind = params.get("category"), params.get("type")
        if category and not (category.isascii() and category.isdigit() and len(category) <= 20):
            raise InvalidInput("category must be a number (1–20 digits)", field="category")
        if kind and not (kind.isalnum() and len(kind) <= 20):
            raise InvalidInput(
                "type must be a task's number (letters and digits, e.g. 1 or Д1)", field="type"
            )
        if params.get("type"):
            qs = qs.filter(type_number=params["type"])
        if params.get("category"):
            qs = qs.filter(categories__category_id=params["category"]).distinct()
        if params.get("q"):
            if len(params["q"]) > Q_MAX:
                raise InvalidInput(f"q must be at most {Q_MAX} characters", field="q")
            qs = qs.filter(condition_text__icontains=params["q"])
        return qs


class ProblemDetailApi(SiteView):
    @extend_schema(parameters=[*SITE_PARAMS, s.SiteQuerySerializer], responses=schemas.ProblemOut)
    def get(self, request: Request, subject: str, exam: str, problem_id: str) -> Response:
        """One problem: from the database while fresh, else fetched from the site; when the
        site fails, the stored copy of any age (`stale`, `fetched_at`, `warnings`)."""
        query = _query(s.SiteQuerySerializer, request)
        read = services.problem_read(
            site=self.site(), problem_id=problem_id, refresh=query["refresh"]
        )
        return Response(formatting.problem_as_dict(read.value, read.stale))


class ProblemBatchApi(SiteView):
    @extend_schema(parameters=SITE_PARAMS, request=schemas.BatchGet, responses=schemas.BatchOut)
    def post(self, request: Request, subject: str, exam: str) -> Response:
        """Up to 50 problems; each failing id has its own error."""
        body = _body(schemas.BatchGet, request)
        items = services.problems_get_many(
            site=self.site(), problem_ids=body.problem_ids, refresh=body.refresh
        )
        return Response(formatting.batch_as_dict(items))


class CatalogApi(SiteView):
    @extend_schema(parameters=[*SITE_PARAMS, s.SiteQuerySerializer], responses=schemas.CatalogOut)
    def get(self, request: Request, subject: str, exam: str) -> Response:
        """The catalog tree: topics with categories."""
        query = _query(s.SiteQuerySerializer, request)
        read = catalog.catalog_read(site=self.site(), refresh=query["refresh"])
        return Response(formatting.catalog_as_dict(read.value, read.stale))


class CategoryProblemsApi(SiteView):
    @extend_schema(
        parameters=[*SITE_PARAMS, s.WindowQuerySerializer], responses=schemas.CategoryOut
    )
    def get(self, request: Request, subject: str, exam: str, category_id: str) -> Response:
        """Problem ids of a category listing (its problems are stored)."""
        query = _query(s.WindowQuerySerializer, request)
        read = catalog.category_problems_read(site=self.site(), category_id=category_id, **query)
        return Response(
            formatting.category_as_dict(read.value, offset=query["offset"], stale=read.stale)
        )


class ExamTestApi(SiteView):
    @extend_schema(parameters=[*SITE_PARAMS, s.SiteQuerySerializer], responses=schemas.TestOut)
    def get(self, request: Request, subject: str, exam: str, test_id: str) -> Response:
        """A test's problem ids, or the note that its author hid them."""
        query = _query(s.SiteQuerySerializer, request)
        read = catalog.exam_test_read(site=self.site(), test_id=test_id, refresh=query["refresh"])
        return Response(formatting.exam_test_as_dict(read.value, read.stale))


class ImageSearchApi(SiteView):
    @extend_schema(
        parameters=SITE_PARAMS, request=s.ImageSearchSerializer, responses=schemas.ImageSearchOut
    )
    def post(self, request: Request, subject: str, exam: str) -> Response:
        """Find problems from a photo of one (image_base64 or image_url): the text read off
        it (OCR) and the matches, ranked with scores."""
        serializer = s.ImageSearchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        outcome = photo.problems_search_by_image(site=self.site(), **serializer.validated_data)
        return Response(formatting.photo_as_dict(outcome))


class SearchApi(SiteView):
    @extend_schema(parameters=[*SITE_PARAMS, s.SearchQuerySerializer], responses=schemas.SearchOut)
    def get(self, request: Request, subject: str, exam: str) -> Response:
        """Keyword search with the site's search, paged with limit/offset."""
        query = _query(s.SearchQuerySerializer, request)
        outcome = services.problems_search(site=self.site(), **query)
        return Response(formatting.search_as_dict(outcome, offset=query["offset"]))


class FuzzySearchApi(SiteView):
    @extend_schema(
        parameters=SITE_PARAMS, request=s.FuzzySearchSerializer, responses=schemas.FuzzyOut
    )
    def post(self, request: Request, subject: str, exam: str) -> Response:
        """Find problems by a (possibly damaged) condition text; ranked with scores."""
        serializer = s.FuzzySearchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        outcome = fuzzy.problems_search_fuzzy(site=self.site(), **serializer.validated_data)
        return Response(formatting.fuzzy_as_dict(outcome))


class VariantListApi(generics.ListAPIView):
    """The caller's variants, newest first."""

    serializer_class = s.VariantSerializer
    permission_classes = (IsAuthenticated,)

    def get_queryset(self) -> QuerySet[Variant]:
        return Variant.objects.filter(owner_id=self.request.user.pk)


class VariantMakeApi(APIView):
    permission_classes = (IsAuthenticated,)

    @extend_schema(
        parameters=SITE_PARAMS, request=schemas.MakeVariant, responses=s.VariantSerializer
    )
    def post(self, request: Request, subject: str, exam: str) -> Response:
        """A variant: {"tasks": {"1": 2, "5": 1}} or {"tasks": "full"}; from the stored
        problems with a `seed` (the same seed, the same problems), or with `"source":
        "site"` made by the site's constructor (its test stored too)."""
        body = _body(schemas.MakeVariant, request)
        made = variants.variant_create(
            user_id=_owner(request),
            site=site_resolve(subject=subject, exam=exam),
            tasks=body.tasks,
            seed=body.seed,
            source=body.source,
        )
        return Response(s.VariantSerializer(made).data, status=201)


class VariantDetailApi(APIView):
    permission_classes = (IsAuthenticated,)

    @extend_schema(responses=s.VariantSerializer)
    def get(self, request: Request, public_id: str) -> Response:
        """One of the caller's variants."""
        found = variants.variant_get(user_id=_owner(request), public_id=public_id)
        return Response(s.VariantSerializer(found).data)


def _owner(request: Request) -> int:
    """The signed-in caller's id (the views ask IsAuthenticated)."""
    if request.user.pk is None:
        raise NotAuthenticated()
    return int(request.user.pk)


class VariantPdfApi(APIView):
    permission_classes = (IsAuthenticated,)

    @extend_schema(
        parameters=[
            OpenApiParameter("solutions", bool, description="Add the solutions"),
            OpenApiParameter(
                "copies", int, description=f"For a class (1–{MAX_COPIES}): each copy shuffled, "
                "with its own key",
            ),
            OpenApiParameter(
                "part", str, enum=list(SHEET_PARTS),
                description="all (default); sheets: without the key; key: the key alone",
            ),
        ],
        request=None,
        responses=s.SheetLinkSerializer,
    )  # fmt: skip
    def post(self, request: Request, public_id: str) -> Response:
        """Print one of the caller's variants: a PDF (conditions with answer boxes, then the
        answer key, and the solutions when asked), stored; its link."""
        from problems import sheets  # reportlab: off the server's start-up

        found = variants.variant_get(user_id=_owner(request), public_id=public_id)
        said = str(request.query_params.get("solutions", "")).lower()
        if said not in {"", "1", "true", "yes", "0", "false", "no"}:
            raise InvalidInput("solutions must be true or false (1/0, yes/no)", field="solutions")
        solutions = said in {"1", "true", "yes"}
        copies = copies_parse(str(request.query_params.get("copies", "1")))
        part = str(request.query_params.get("part", "all"))
        name = sheets.variant_pdf(
            variant=found,
            with_solutions=solutions,
            copies=copies,
            part=part,  # type: ignore[arg-type]
        )  # the service checks part
        return Response({"url": request.build_absolute_uri(sheet_link(name))})


class VariantCheckApi(APIView):
    permission_classes = (IsAuthenticated,)

    @extend_schema(request=s.VariantAnswersSerializer, responses=s.VariantGradedSerializer)
    def post(self, request: Request, public_id: str) -> Response:
        """Grade a learner's answers to one of the caller's variants: a verdict per task and
        the primary score."""
        serializer = s.VariantAnswersSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        graded = variants.variant_check(
            user_id=_owner(request),
            public_id=public_id,
            answers=serializer.validated_data["answers"],
        )
        return Response(graded)
