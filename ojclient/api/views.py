"""REST adapters of the OJ client: the five tools as JSON, and the stored problems."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from core.throttling import UPSTREAM_ANON
from ojclient import services
from ojclient.api import serializers as s
from ojclient.entities import Problem
from ojclient.formatting import content_to_markdown
from ojclient.models import OjProblem


def _query(serializer_class: type[Serializer], request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def problem_as_dict(problem: Problem, *, default_source: str | None) -> dict[str, Any]:
    data = problem.model_dump(mode="json")
    data["source"] = problem.source or default_source
    data["content_markdown"] = content_to_markdown(problem.content)
    return data


def problems_as_dict(result: services.ProblemsResult) -> dict[str, Any]:
    return {
        "problems": [
            problem_as_dict(p, default_source=result.default_source) for p in result.problems
        ],
        "stored_copy_from": result.stored_at.isoformat() if result.stored_at else None,
    }


class OjView(APIView):
    permission_classes: tuple[type[BasePermission], ...] = (AllowAny,)
    throttle_scope = UPSTREAM_ANON  # asks the OJ API


class DailyApi(OjView):
    @extend_schema(parameters=[s.OjDailyQuerySerializer], responses=s.OjDailyOutSerializer)
    def get(self, request: Request) -> Response:
        """The daily challenge (`status: fetching` with `retry_after` while the API fetches it)."""
        query = _query(s.OjDailyQuerySerializer, request)
        daily = services.daily_get(domain=query["domain"], date=query.get("date"))
        body: dict[str, Any] = {
            "date": daily.date,
            "domain": daily.domain,
            "status": "fetching" if daily.fetching else "ready",
            "retry_after": daily.retry_after,
            "problems": [],
            "stored_copy_from": None,
        }
        if daily.result is not None:
            body.update(problems_as_dict(daily.result))
        return Response(body)


class ProblemApi(OjView):
    @extend_schema(
        parameters=[
            OpenApiParameter("source", str, OpenApiParameter.PATH),
            OpenApiParameter("problem_id", str, OpenApiParameter.PATH, description="may contain /"),
        ],
        responses=s.OjProblemsOutSerializer,
    )
    def get(self, request: Request, source: str, problem_id: str) -> Response:
        """One problem by platform and id."""
        return Response(
            problems_as_dict(services.problem_get(source=source, problem_id=problem_id))
        )


class SimilarApi(OjView):
    @extend_schema(parameters=[s.OjSimilarQuerySerializer], responses=s.OjSimilarOutSerializer)
    def get(self, request: Request) -> Response:
        """Similar problems to a text (`query`, or its alias `q`) or to a problem (`source` +
        `id`)."""
        query = _query(s.OjSimilarQuerySerializer, request)
        result = services.similar_find(
            query=query.get("query") or query.get("q"),
            source=query.get("source"),
            problem_id=query.get("id"),
            limit=query.get("limit"),
            threshold=query.get("threshold"),
            source_filter=query.get("source_filter"),
        )
        return Response(
            {
                "query": result.query,
                "mode": result.mode,
                "results": [item.model_dump(mode="json") for item in result.results],
            }
        )


class ResolveApi(OjView):
    @extend_schema(parameters=[s.OjResolveQuerySerializer], responses=s.OjProblemsOutSerializer)
    def get(self, request: Request) -> Response:
        """The problem a URL, slug or id refers to."""
        query = _query(s.OjResolveQuerySerializer, request)
        return Response(problems_as_dict(services.problem_resolve(query=query["query"])))


class StatusApi(OjView):
    permission_classes = (IsAuthenticated,)  # it spends the server's OJ_API_TOKEN

    @extend_schema(responses=s.OjStatusOutSerializer)
    def get(self, request: Request) -> Response:
        """Per-platform counts (signed-in users only: it uses the server's OJ_API_TOKEN)."""
        return Response(services.platform_status_get().model_dump(mode="json"))


@extend_schema(
    parameters=[
        OpenApiParameter("source", str, description="Platform"),
        OpenApiParameter("q", str, description="Text in the title"),
    ]
)
class StoredProblemListApi(generics.ListAPIView):
    """Problems received so far (no request to the API)."""

    serializer_class = s.OjStoredProblemSerializer
    permission_classes = (AllowAny,)

    def get_queryset(self) -> QuerySet[OjProblem]:
        params = self.request.query_params
        qs = OjProblem.objects.order_by("source", "problem_id")
        if params.get("source"):
            qs = qs.filter(source=params["source"])
        if params.get("q"):
            qs = qs.filter(title__icontains=params["q"])
        return qs
