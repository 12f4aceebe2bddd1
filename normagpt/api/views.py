"""REST adapters of the norms agent: runs (authenticated), the corpus and search (read)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.exceptions import InvalidInput
from normagpt import formatting, schemas, selectors, services, threads
from normagpt.api import serializers as s
from normagpt.models import AgentRun, NormDocument, NormPage

PAGE_MAX = 200
PAGE_PARAMETERS = [
    OpenApiParameter("limit", int, description=f"Items a page (1–{PAGE_MAX}, default 50)"),
    OpenApiParameter("offset", int, description="Items skipped (the last page's next_offset)"),
]


def page_of(request: Request, items: QuerySet[Any]) -> tuple[list[Any], int | None]:
    """A page of `items` as `limit` and `offset` ask, and the offset of the next page (None
    at the end); InvalidInput naming a bound broken."""
    limit = _bounded(request, "limit", 50, 1, PAGE_MAX)
    offset = _bounded(request, "offset", 0, 0, 10**9)
    shown = list(items[offset : offset + limit + 1])
    return shown[:limit], offset + limit if len(shown) > limit else None


def _bounded(request: Request, name: str, default: int, low: int, high: int) -> int:
    said = request.query_params.get(name)
    if said is None or said == "":
        return default
    if not (said.isascii() and said.isdigit()) or not low <= int(said) <= high:
        raise InvalidInput(f"{name} must be a whole number {low}–{high}", field=name)
    return int(said)


class RunListCreateApi(APIView):
    permission_classes = (IsAuthenticated,)

    @extend_schema(
        operation_id="normagpt_runs_list",
        parameters=[
            OpenApiParameter("status", str, description="Only runs with this status"),
            *PAGE_PARAMETERS,
        ],
        responses=schemas.RunListOut,
    )
    def get(self, request: Request) -> Response:
        """Your runs, newest first, a page at a time (`limit`, 50; `offset`); staff see
        everyone's."""
        status_ = request.query_params.get("status") or None
        if status_ is not None and status_ not in AgentRun.Status.values:
            raise InvalidInput(
                f"status must be one of {', '.join(AgentRun.Status.values)}", field="status"
            )
        shown, next_offset = page_of(
            request, selectors.run_list(status=status_, viewer=request.user)
        )
        runs = [formatting.run_as_dict(run, with_steps=False) for run in shown]
        return Response({"runs": runs, "next_offset": next_offset})

    @extend_schema(request=s.AskSerializer, responses={202: schemas.RunOut})
    def post(self, request: Request) -> Response:
        """Ask a question: the run is queued and works in the background (poll its URL)."""
        serializer = s.AskSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        run = services.run_create(
            question=serializer.validated_data["question"],
            user=request.user,
            thread=serializer.validated_data.get("thread"),
            as_of=serializer.validated_data.get("as_of"),
        )
        run = selectors.run_get(run_id=run.pk)
        return Response(formatting.run_as_dict(run), status=status.HTTP_202_ACCEPTED)


class RunDetailApi(APIView):
    permission_classes = (IsAuthenticated,)

    @extend_schema(responses=schemas.RunOut)
    def get(self, request: Request, run_id: str) -> Response:
        """A run: status, steps, and the answer with its sources once completed. Another
        user's run is a 404, as if it did not exist (staff see every run)."""
        run = selectors.run_get_public(public_id=run_id, viewer=request.user)
        return Response(formatting.run_as_dict(run))


class RunResumeApi(APIView):
    permission_classes = (IsAuthenticated,)

    @extend_schema(request=s.ResumeSerializer, responses={202: schemas.RunOut})
    def post(self, request: Request, run_id: str) -> Response:
        """Resume a run waiting for review (needs_review) with a reviewer's note: your own
        run, or any run for staff, as `normagpt_resume` over MCP. 409 unless it waits."""
        serializer = s.ResumeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        run = selectors.run_get_public(public_id=run_id, viewer=request.user)
        services.run_resume(run_id=run.pk, **serializer.validated_data)
        run = selectors.run_get(run_id=run.pk)
        return Response(formatting.run_as_dict(run), status=status.HTTP_202_ACCEPTED)


class RunReplyApi(APIView):
    permission_classes = (IsAuthenticated,)

    @extend_schema(request=s.ReplySerializer, responses={202: schemas.RunOut})
    def post(self, request: Request, run_id: str) -> Response:
        """Answer the questions your run asked (status awaiting_input, the questions in
        `clarifying_questions`): it goes on with the answer. 409 unless it waits for one."""
        serializer = s.ReplySerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        run = selectors.run_get_public(public_id=run_id, viewer=request.user)
        services.run_reply(
            run_id=run.pk, answer=serializer.validated_data["answer"], user=request.user
        )
        run = selectors.run_get(run_id=run.pk)
        return Response(formatting.run_as_dict(run), status=status.HTTP_202_ACCEPTED)


class ThreadListApi(APIView):
    permission_classes = (IsAuthenticated,)

    @extend_schema(
        operation_id="normagpt_threads_list",
        parameters=PAGE_PARAMETERS,
        responses=schemas.ThreadListOut,
    )
    def get(self, request: Request) -> Response:
        """Your threads, the latest active first, a page at a time (`limit`, 50; `offset`);
        staff see everyone's."""
        visible = threads.threads_visible(request.user).order_by("-updated_at", "-id")
        shown, next_offset = page_of(request, visible)
        found = [formatting.thread_as_dict(t) for t in shown]
        return Response({"threads": found, "next_offset": next_offset})


class ThreadDetailApi(APIView):
    permission_classes = (IsAuthenticated,)

    @extend_schema(responses=schemas.ThreadOut)
    def get(self, request: Request, thread_id: str) -> Response:
        """A thread: its runs (questions and answers), oldest first. Another user's thread
        is a 404, as if it did not exist."""
        thread = threads.thread_get_public(public_id=thread_id, viewer=request.user)
        return Response(formatting.thread_as_dict(thread, with_runs=True))


class DocumentListApi(generics.ListAPIView):
    """The corpus: norm documents with their status and ingestion state."""

    serializer_class = s.DocumentSerializer
    permission_classes = (AllowAny,)

    def get_queryset(self) -> QuerySet[NormDocument]:
        return selectors.document_list()


class DocumentDetailApi(generics.RetrieveAPIView):
    serializer_class = s.DocumentSerializer
    permission_classes = (AllowAny,)

    def get_queryset(self) -> QuerySet[NormDocument]:
        return selectors.document_list()


class DocumentPagesApi(generics.ListAPIView):
    """A document's pages (without their text; a page's own URL has it)."""

    serializer_class = s.PageListSerializer
    permission_classes = (AllowAny,)

    def get_queryset(self) -> QuerySet[NormPage]:
        selectors.document_get(document_id=self.kwargs["pk"])
        return selectors.page_list(document_id=self.kwargs["pk"])


class PageDetailApi(generics.RetrieveAPIView):
    serializer_class = s.PageSerializer
    permission_classes = (AllowAny,)

    def get_queryset(self) -> QuerySet[NormPage]:
        return selectors.page_list()


class SearchApi(APIView):
    permission_classes = (AllowAny,)

    @extend_schema(
        parameters=[
            OpenApiParameter("keywords", str, many=True, required=True, description="Repeat"),
            OpenApiParameter("expected", str, many=True, description="Codes to rank first"),
            OpenApiParameter("limit", int, description="1–50, default 10"),
            OpenApiParameter(
                "as_of", OpenApiTypes.DATE, description="The editions in force that day"
            ),
        ],
        responses=schemas.SearchOut,
    )
    def get(self, request: Request) -> Response:
        """Pages matching the keywords, expected documents first; replaced ones marked."""
        params: dict[str, Any] = {
            "keywords": request.query_params.getlist("keywords"),
            "expected": request.query_params.getlist("expected"),
        }
        for name in ("limit", "as_of"):
            if name in request.query_params:
                params[name] = request.query_params[name]
        serializer = s.SearchQuerySerializer(data=params)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        hits = services.pages_search(
            keywords=data["keywords"],
            expected_documents=data.get("expected", []),
            limit=data["limit"],
            as_of=data.get("as_of"),
        )
        return Response(formatting.search_as_dict(data["keywords"], data.get("expected", []), hits))
