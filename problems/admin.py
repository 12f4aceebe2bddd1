"""Admin of the problem bank: problems with a rendered preview, the catalog tree, tests."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from core.admin import CasedAdmin, left_out
from core.exceptions import DomainError
from problems import services
from problems.formatting import problem_url
from problems.models import Category, Problem, SeenProblem, Test, Topic, Variant
from problems.sheet_links import sheet_link
from problems.subjects import Site


class CategoryFilter(admin.SimpleListFilter):
    title = _("category")
    parameter_name = "category"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [
            (str(c.pk), f"{c.subject}-{c.exam} {c.category_id} {c.title}"[:80])
            for c in Category.objects.order_by("subject", "exam", "position")[:500]
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Problem]) -> QuerySet[Problem]:
        value = self.value()
        if not value:
            return queryset
        if not value.isascii() or not value.isdigit():  # the changelist's own «?e=1»
            raise IncorrectLookupParameters(f"category: {value!r} is no category's id")
        return queryset.filter(categories__pk=int(value))


@admin.register(Problem)
class ProblemAdmin(CasedAdmin):
    accusative = pgettext_lazy("accusative", "problem")
    list_display = [
        "problem_id",
        "site",
        "type_number",
        "short_condition",
        "answer",
        "solution_kind",
        "fetched_at",
    ]
    list_filter = ["subject", "exam", "type_number", "solution_kind", CategoryFilter]
    search_fields = ["problem_id", "condition_text", "source_text"]
    readonly_fields = ["preview", "site_link"]
    fields = [
        "preview",
        "site_link",
        "subject",
        "exam",
        "problem_id",
        "type_number",
        "answer",
        "answers",
        "analogs",
        "codifier",
        "solution_kind",
        "fetched_at",
    ]
    # and "Send to Anki", added by anki_bridge (it builds on this app, not this on it)
    actions = ["refresh_from_site", "fetch_analogs"]
    list_per_page = 50

    @admin.display(description=_("site"))
    def site(self, obj: Problem) -> str:
        return obj.site_label

    @admin.display(description=_("condition"))
    def short_condition(self, obj: Problem) -> str:
        text = obj.condition_text
        return text if len(text) <= 90 else text[:87] + "…"

    @admin.display(description=_("on the site"))
    def site_link(self, obj: Problem) -> SafeString:
        url = problem_url(obj)
        return format_html('<a href="{}" target="_blank" rel="noopener">{}</a>', url, url)

    @admin.display(description=_("preview"))
    def preview(self, obj: Problem) -> SafeString:
        # condition_html and solution_html were sanitized when parsed (parsing.py).
        figures = format_html_join(
            "", '<img src="{}" style="max-width:320px;margin:4px">', ((u,) for u in obj.figures)
        )
        return format_html(
            '<div style="max-width:820px">'
            "<h3>{}</h3>{}{}{}"
            "<h3>{} ({})</h3>{}"
            "<h3>{}</h3><p><b>{}</b></p></div>",
            _("Condition"),
            mark_safe(obj.source_html),  # noqa: S308
            mark_safe(obj.condition_html),  # noqa: S308
            figures,
            _("Solution"),
            obj.get_solution_kind_display(),
            mark_safe(obj.solution_html)  # noqa: S308
            if obj.solution_html
            else format_html("<p><i>{}</i></p>", _("none")),
            _("Answer"),
            obj.answer or "—",
        )

    @admin.action(description=_("Refresh from the site"), permissions=["change"])
    def refresh_from_site(self, request: HttpRequest, queryset: QuerySet[Problem]) -> None:
        done = failed = 0
        left_out(self, request, queryset, 50)
        for problem in queryset[:50]:
            try:
                services.problem_get(
                    site=Site(problem.subject, problem.exam),
                    problem_id=problem.problem_id,
                    refresh=True,
                )
                done += 1
            except DomainError as exc:
                failed += 1
                self.message_user(request, f"{problem}: {exc.message}", messages.ERROR)
        self.message_user(
            request,
            _("Refreshed %(done)s problem(s); %(failed)s failed.")
            % {"done": done, "failed": failed},
            messages.SUCCESS if not failed else messages.WARNING,
        )

    @admin.action(description=_("Fetch analogs"), permissions=["change"])
    def fetch_analogs(self, request: HttpRequest, queryset: QuerySet[Problem]) -> None:
        left_out(self, request, queryset, 10)
        for problem in queryset[:10]:
            ids = problem.analogs[:50]
            if not ids:
                self.message_user(
                    request, _("%(problem)s: the site lists no analogs.") % {"problem": problem}
                )
                continue
            items = services.problems_get_many(
                site=Site(problem.subject, problem.exam), problem_ids=ids
            )
            failed = [i for i in items if i.error or i.stale]  # stale: not fetched
            level = messages.SUCCESS if not failed else messages.WARNING
            self.message_user(
                request,
                _("%(problem)s: %(stored)s analogs stored, %(failed)s failed.")
                % {"problem": problem, "stored": len(items) - len(failed), "failed": len(failed)},
                level,
            )


class CategoryInline(admin.TabularInline):
    model = Category
    fields = ("category_id", "title", "count", "problems_link")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    @admin.display(description=_("stored problems"))
    def problems_link(self, obj: Category) -> SafeString:
        url = reverse("admin:problems_problem_changelist") + f"?category={obj.pk}"
        return format_html('<a href="{}">browse</a>', url)

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Topic)
class TopicAdmin(CasedAdmin):
    accusative = pgettext_lazy("accusative", "topic")
    list_display = [
        "__str__",
        "subject",
        "exam",
        "count",
        "is_additional",
        "n_categories",
        "fetched_at",
    ]
    list_filter = ["subject", "exam", "is_additional"]
    search_fields = ["title"]
    inlines = [CategoryInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Topic]:
        return super().get_queryset(request).annotate(n=Count("categories"))

    @admin.display(description=_("categories"), ordering="n")
    def n_categories(self, obj: Topic) -> int:
        return int(getattr(obj, "n", 0))


@admin.register(Category)
class CategoryAdmin(CasedAdmin):
    accusative = pgettext_lazy("accusative", "category")
    list_display = [
        "category_id",
        "title",
        "subject",
        "exam",
        "topic",
        "count",
        "stored",
        "listing_fetched_at",
    ]
    list_filter = ["subject", "exam"]
    search_fields = ["title", "category_id"]
    raw_id_fields = ["topic"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Category]:
        return super().get_queryset(request).select_related("topic").annotate(n=Count("problems"))

    @admin.display(description=_("stored problems"), ordering="n")
    def stored(self, obj: Category) -> SafeString:
        url = reverse("admin:problems_problem_changelist") + f"?category={obj.pk}"
        return format_html('<a href="{}">{}</a>', url, obj.n)  # type: ignore[attr-defined]


@admin.register(Test)
class TestAdmin(CasedAdmin):
    list_display = [
        "test_id",
        "subject",
        "exam",
        "title",
        "problem_count",
        "ids_hidden",
        "fetched_at",
    ]
    list_filter = ["subject", "exam", "ids_hidden"]
    search_fields = ["test_id", "title"]


PRINT_MAX = 20  # variants printed by one run of the admin action


@admin.register(Variant)
class VariantAdmin(CasedAdmin):
    """Variants as the teachers made them: read-only (made over REST or MCP)."""

    accusative = pgettext_lazy("accusative", "variant")
    list_display = ["public_id", "subject", "exam", "source", "owner", "size", "created_at"]
    list_filter = ["subject", "exam", "source"]
    search_fields = ["public_id", "owner__username"]
    readonly_fields = [
        "public_id", "owner", "subject", "exam", "tasks", "source", "seed", "site_test_id",
        "problem_ids", "created_at",
    ]  # fmt: skip

    actions = ["print_sheets"]

    @admin.display(description=_("problems"))
    def size(self, obj: Variant) -> int:
        return len(obj.problem_ids)

    @admin.action(description=_("Print (PDF with the answer key and solutions)"))
    def print_sheets(
        self, request: HttpRequest, queryset: QuerySet[Variant]
    ) -> HttpResponse | None:
        from problems import sheets  # reportlab: off the server's start-up

        left_out(self, request, queryset, PRINT_MAX)
        chosen = list(queryset[:PRINT_MAX])
        if len(chosen) == 1:
            pdf = sheets.variant_pdf_bytes(variant=chosen[0], with_solutions=True)
            response = HttpResponse(pdf, content_type="application/pdf")
            response["Content-Disposition"] = (
                f'attachment; filename="variant-{chosen[0].public_id}.pdf"'
            )
            return response
        links = format_html_join(
            ", ",
            '<a href="{}">{}</a>',
            (
                (
                    sheet_link(sheets.variant_pdf(variant=v, with_solutions=True)),
                    v.public_id,
                )
                for v in chosen
            ),
        )
        self.message_user(request, format_html("{} {}", _("Printed:"), links), messages.SUCCESS)
        return None

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(SeenProblem)
class SeenProblemAdmin(CasedAdmin):
    """The problems `sdamgia_random_problem` gave each user: read-only; deleting a row lets
    the problem be drawn for them again."""

    accusative = pgettext_lazy("accusative", "problem seen")
    list_display = ["problem_id", "subject", "exam", "owner", "seen_at"]
    list_filter = ["subject", "exam"]
    search_fields = ["problem_id", "owner__username"]
    readonly_fields = ["owner", "subject", "exam", "problem_id", "seen_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
