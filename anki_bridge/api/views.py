"""REST adapters of the Anki bridge: add notes (the add_from_model contract), the journal."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from anki_bridge import schemas, selectors, services
from anki_bridge.api import serializers as s
from anki_bridge.models import Note


class NoteListCreateApi(generics.ListAPIView):
    """The caller's journal (GET, newest first, `?status=` and `?deck=`; staff see every
    user's) and adding notes (POST, owned by the caller)."""

    serializer_class = s.NoteSerializer
    permission_classes = (IsAuthenticated,)

    @extend_schema(parameters=[s.JournalQuerySerializer])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Note]:
        query = s.JournalQuerySerializer(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        return selectors.note_list(viewer=self.request.user, **query.validated_data)

    @extend_schema(request=s.AddNotesSerializer, responses=schemas.AddNotesResult)
    def post(self, request: Request) -> Response:
        """Add notes fitted to the model; `queued` notes wait for Anki in the journal."""
        body = s.AddNotesSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        result = services.notes_add_from_model(
            items=body.validated_data["items"],
            deck=body.validated_data.get("deck"),
            model=body.validated_data.get("model"),
            source="api",
            owner=request.user.pk,
        )
        return Response(result.model_dump(mode="json", exclude_none=True))
