"""DRF serializers of the problem bank."""

from __future__ import annotations

from rest_framework import serializers

from problems.formatting import problem_url
from problems.models import Problem
from problems.photo import MAX_BASE64_CHARS, MAX_URL_CHARS


class ProblemListSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="problem_id")
    url = serializers.SerializerMethodField()

    class Meta:
        model = Problem
        fields = [
            "id",
            "subject",
            "exam",
            "type_number",
            "condition_text",
            "answer",
            "url",
            "fetched_at",
        ]

    def get_url(self, obj: Problem) -> str:
        return problem_url(obj)


class SiteQuerySerializer(serializers.Serializer):
    refresh = serializers.BooleanField(default=False)


class WindowQuerySerializer(SiteQuerySerializer):
    limit = serializers.IntegerField(min_value=1, max_value=50, default=20)
    offset = serializers.IntegerField(min_value=0, max_value=1000, default=0)


class SearchQuerySerializer(WindowQuerySerializer):
    query = serializers.CharField(min_length=3, max_length=500)


class FuzzySearchSerializer(serializers.Serializer):
    condition_text = serializers.CharField(min_length=10, max_length=1000, trim_whitespace=True)
    threshold = serializers.FloatField(min_value=0, max_value=1, default=0.6)
    refresh = serializers.BooleanField(
        default=False, help_text="Ask the site even when a stored problem matches confidently."
    )
    limit = serializers.IntegerField(min_value=1, max_value=50, default=20)


class ImageSearchSerializer(serializers.Serializer):
    image_base64 = serializers.CharField(
        required=False,
        max_length=MAX_BASE64_CHARS,
        trim_whitespace=True,
        help_text="The photo (JPEG, PNG, WebP…) as base64 or a data URL; or give image_url.",
    )
    image_url = serializers.URLField(
        required=False,
        max_length=MAX_URL_CHARS,
        help_text="An http(s) URL of the photo (public hosts only); or give image_base64.",
    )
    threshold = serializers.FloatField(min_value=0, max_value=1, default=0.6)
    limit = serializers.IntegerField(min_value=1, max_value=50, default=20)
    refresh = serializers.BooleanField(default=False)


class VariantSerializer(serializers.Serializer):
    id = serializers.CharField(source="public_id")
    subject = serializers.CharField()
    exam = serializers.CharField()
    tasks = serializers.JSONField()
    source = serializers.CharField()  # type: ignore[assignment]  # declared fields leave the class
    seed = serializers.IntegerField(allow_null=True)
    site_test_id = serializers.CharField()
    problem_ids = serializers.ListField(child=serializers.CharField())
    created_at = serializers.DateTimeField()


class VariantAnswersSerializer(serializers.Serializer):
    answers = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=500),
        help_text="The learner's answers by the number on the sheet (1, 2, …) or problem id",
    )


class TaskVerdictSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    problem_id = serializers.CharField()
    verdict = serializers.ChoiceField(choices=["correct", "incorrect", "missing", "unchecked"])


class VariantGradedSerializer(serializers.Serializer):
    variant = serializers.CharField()
    tasks = TaskVerdictSerializer(many=True)
    score = serializers.IntegerField()
    max_score = serializers.IntegerField()


class SheetLinkSerializer(serializers.Serializer):
    url = serializers.URLField()
