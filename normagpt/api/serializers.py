"""DRF serializers of the norms agent."""

from __future__ import annotations

from rest_framework import serializers

from normagpt import services
from normagpt.formatting import page_image_url, page_url
from normagpt.models import NormDocument, NormPage


class DocumentSerializer(serializers.ModelSerializer):
    replaced_by = serializers.CharField(source="replaced_by.code", default=None, read_only=True)

    class Meta:
        model = NormDocument
        fields = [
            "id", "code", "title", "kind", "status", "replaced_by", "is_sample",
            "ingest_status", "ingest_error", "page_count", "created_at", "updated_at",
        ]  # fmt: skip


class PageSerializer(serializers.ModelSerializer):
    document = serializers.CharField(source="document.code", read_only=True)
    image_url = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()

    class Meta:
        model = NormPage
        fields = [
            "id", "document", "number", "clauses", "has_text_layer", "ocr", "width", "height",
            "image_url", "url", "text",
        ]  # fmt: skip

    def get_image_url(self, obj: NormPage) -> str | None:
        return page_image_url(obj)

    def get_url(self, obj: NormPage) -> str | None:
        return page_url(obj.pk)


class PageListSerializer(PageSerializer):
    class Meta(PageSerializer.Meta):
        fields = [f for f in PageSerializer.Meta.fields if f != "text"]


class AskSerializer(serializers.Serializer):
    question = serializers.CharField(min_length=5, max_length=2000)
    thread = serializers.CharField(
        max_length=32,
        required=False,
        allow_null=True,
        help_text="A follow-up: the thread of an earlier run of yours (its `thread`).",
    )
    as_of = serializers.DateField(
        required=False,
        allow_null=True,
        help_text="The day the answer is for: the editions in force then (default today).",
    )


class ResumeSerializer(serializers.Serializer):
    note = serializers.CharField(min_length=1, max_length=services.NOTE_MAX)
    decision = serializers.ChoiceField(
        choices=["CONTINUE", "REPLAN", "FINALIZE"], required=False, allow_null=True
    )


class ReplySerializer(serializers.Serializer):
    answer = serializers.CharField(min_length=1, max_length=2000)


class SearchQuerySerializer(serializers.Serializer):
    keywords = serializers.ListField(
        child=serializers.CharField(min_length=1, max_length=services.KEYWORD_CHARS),
        min_length=1,
        max_length=12,
    )
    expected = serializers.ListField(
        child=serializers.CharField(min_length=1, max_length=100), required=False, max_length=8
    )
    limit = serializers.IntegerField(min_value=1, max_value=50, default=10)
    as_of = serializers.DateField(required=False, allow_null=True)
