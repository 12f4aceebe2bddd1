"""Shapes of the OJ REST endpoints: query parameters in, JSON out (for the OpenAPI schema)."""

from __future__ import annotations

from rest_framework import serializers

from ojclient.models import OjProblem


class OjDailyQuerySerializer(serializers.Serializer):
    domain = serializers.ChoiceField(choices=["com", "cn"], required=False, default="com")
    date = serializers.CharField(required=False, help_text="YYYY-MM-DD (UTC); default today")


class OjSimilarQuerySerializer(serializers.Serializer):
    query = serializers.CharField(
        required=False, trim_whitespace=False, help_text="3–2000 characters (as the tool's)"
    )
    q = serializers.CharField(required=False, trim_whitespace=False, help_text="`query`'s alias")
    source = serializers.CharField(required=False, trim_whitespace=False)  # type: ignore[assignment]  # the API's field name
    id = serializers.CharField(required=False, trim_whitespace=False)
    limit = serializers.IntegerField(required=False, help_text="1–50, default 10")
    threshold = serializers.FloatField(required=False, help_text="0.0–1.0, default 0.0")
    source_filter = serializers.CharField(required=False, help_text="e.g. leetcode,codeforces")


class OjResolveQuerySerializer(serializers.Serializer):
    query = serializers.CharField(trim_whitespace=False, help_text="URL, slug or id")


class OjProblemOutSerializer(serializers.Serializer):
    source = serializers.CharField(allow_null=True)  # type: ignore[assignment]  # the API's field name
    id = serializers.CharField()
    slug = serializers.CharField(allow_null=True)
    title = serializers.CharField(allow_null=True)
    title_cn = serializers.CharField(allow_null=True)
    difficulty = serializers.CharField(allow_null=True)
    tags = serializers.ListField(child=serializers.CharField())
    link = serializers.CharField(allow_null=True)
    ac_rate = serializers.FloatField(allow_null=True, help_text="percent, 0–100")
    content = serializers.CharField(allow_null=True, help_text="as the API sent it")
    content_markdown = serializers.CharField(help_text="the statement as Markdown")


class OjProblemsOutSerializer(serializers.Serializer):
    problems = OjProblemOutSerializer(many=True)
    stored_copy_from = serializers.DateTimeField(
        allow_null=True, help_text="set when the API was unreachable and a stored copy is served"
    )


class OjDailyOutSerializer(OjProblemsOutSerializer):
    date = serializers.DateField()
    domain = serializers.CharField()
    status = serializers.ChoiceField(choices=["ready", "fetching"])
    retry_after = serializers.IntegerField(allow_null=True)


class OjSimilarItemSerializer(serializers.Serializer):
    source = serializers.CharField(allow_null=True)  # type: ignore[assignment]  # the API's field name
    id = serializers.CharField(allow_null=True)
    title = serializers.CharField(allow_null=True)
    difficulty = serializers.CharField(allow_null=True)
    link = serializers.CharField(allow_null=True)
    similarity = serializers.FloatField(allow_null=True, help_text="0.0–1.0")


class OjSimilarOutSerializer(serializers.Serializer):
    query = serializers.CharField()
    mode = serializers.ChoiceField(choices=["query", "problem"])
    results = OjSimilarItemSerializer(many=True)


class OjPlatformSerializer(serializers.Serializer):
    source = serializers.CharField()  # type: ignore[assignment]  # the API's field name
    total = serializers.IntegerField()
    missing_content = serializers.IntegerField()
    not_embedded = serializers.IntegerField()


class OjStatusOutSerializer(serializers.Serializer):
    version = serializers.CharField()
    platforms = OjPlatformSerializer(many=True)


class OjStoredProblemSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="problem_id")

    class Meta:
        model = OjProblem
        fields = [
            "source",
            "id",
            "slug",
            "title",
            "title_cn",
            "difficulty",
            "tags",
            "link",
            "ac_rate",
            "fetched_at",
        ]
