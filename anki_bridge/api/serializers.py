"""DRF serializers of the Anki bridge."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from anki_bridge.models import Note


class NoteSerializer(serializers.ModelSerializer):
    class Meta:
        model = Note
        fields = [
            "id",
            "deck",
            "model",
            "fields",
            "tags",
            "media",
            "dedup_key",
            "status",
            "anki_note_id",
            "attempts",
            "last_error",
            "warnings",
            "source",
            "owner",
            "created_at",
            "sent_at",
        ]


class AddNotesSerializer(serializers.Serializer):
    """The `anki.add_from_model` arguments; the items are checked by the service."""

    deck = serializers.CharField(required=False, allow_blank=True, max_length=255)
    model = serializers.CharField(required=False, allow_blank=True, max_length=255)
    items = serializers.ListField(child=serializers.DictField(), min_length=1, max_length=500)


class JournalQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Note.Status.choices, required=False)
    deck = serializers.CharField(required=False, max_length=255)


class PackageSerializer(serializers.Serializer):
    """The `anki.export_package` arguments: notes (checked by the service) or a variant."""

    deck = serializers.CharField(required=False, allow_blank=True, max_length=255)
    model = serializers.CharField(required=False, allow_blank=True, max_length=255)
    items = serializers.ListField(
        child=serializers.DictField(), min_length=1, max_length=500, required=False
    )
    variant = serializers.CharField(required=False, max_length=32)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("items" in attrs) == ("variant" in attrs):
            raise serializers.ValidationError({"items": "give either items or variant"})
        return attrs
