"""REST adapters of the Anki bridge: add notes (the add_from_model contract), the journal."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from django.db.models import QuerySet
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from anki_bridge import packages, problem_cards, schemas, selectors, services
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


class PackageCreateApi(APIView):
    """Build an Anki package (`.apkg`) of notes or of a variant of yours, for AnkiDroid,
    AnkiMobile or Anki without AnkiConnect: 201 with its id and download URL."""

    permission_classes = (IsAuthenticated,)

    @extend_schema(request=s.PackageSerializer, responses={201: dict})
    def post(self, request: Request) -> Response:
        body = s.PackageSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        if "variant" in data:
            built = problem_cards.variant_package_build(
                user_id=int(request.user.pk or 0),
                variant=data["variant"],
                deck=data.get("deck") or None,
            )
        else:
            built = packages.package_build(
                items=data["items"], deck=data.get("deck") or None, model=data.get("model") or None
            )
        stored = packages.package_store(built=built, owner_id=int(request.user.pk or 0))
        return Response(
            {
                "package": stored.public_id,
                "name": stored.name,
                "deck": stored.deck,
                "notes": stored.notes,
                "cards": stored.cards,
                "media": stored.media,
                "size": stored.size,
                "expires_at": stored.expires_at,
                "url": request.build_absolute_uri(f"{stored.public_id}/"),
                "details": [
                    d.model_dump(mode="json", exclude_none=True)
                    for d in built.details
                    if d.status != "ok" or d.warnings
                ],
            },
            status=status.HTTP_201_CREATED,
        )


class PackageDownloadApi(APIView):
    """A package of yours as its `.apkg` file (another user's does not exist for you)."""

    permission_classes = (IsAuthenticated,)

    @extend_schema(responses={(200, packages.MIME): bytes})
    def get(self, request: Request, public_id: str) -> HttpResponse:
        found = packages.package_get(owner_id=int(request.user.pk or 0), public_id=public_id)
        response = HttpResponse(packages.package_bytes(found), content_type=packages.MIME)
        response["Content-Disposition"] = f"attachment; filename*=UTF-8''{quote(found.name)}"
        return response
