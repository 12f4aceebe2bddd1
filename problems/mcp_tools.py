"""MCP tools of the СДАМ ГИА problem bank (contract: seeds 000/001, the seeds README)."""

from __future__ import annotations

import dataclasses
from typing import Annotated

from django.conf import settings
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ResourceLink
from pydantic import Field, WithJsonSchema

from core.identity import mcp_caller
from core.links import absolute_url
from core.registry import ToolRegistry
from core.tooling import Format, file_attach, respond, respond_json, thread_progress
from problems import catalog, formatting, fuzzy, mcp_content, photo, schemas, services, variants
from problems.models import Problem
from problems.sheet_copies import MAX_COPIES, SheetPart
from problems.sheet_links import sheet_link
from problems.sheet_store import StoredSheet
from problems.stored import Answer
from problems.subjects import site_resolve

registry = ToolRegistry(
    app="problems",
    title="СДАМ ГИА problem bank",
    description=(
        "Problems of the Russian ЕГЭ and ОГЭ exams from the {subject}-{ege|oge}.sdamgia.ru "
        "sites: get a problem, search by keywords or by a (possibly OCR-damaged) condition "
        "text, browse the catalog, categories and tests. Cached in the database."
    ),
)

# Checked by `site_resolve` (an unknown or empty subject is refused, naming the field).
# A closed set of names: the length bound is checked, not advertised.
Subject = Annotated[
    str,
    Field(max_length=60),
    WithJsonSchema({"type": "string", "description": "math, inf, rus… or a Russian name."}),
]
# Also accepts «ЕГЭ»/«ОГЭ» and other spellings; the schema offers the canonical codes.
Exam = Annotated[str, Field(json_schema_extra={"enum": ["ege", "oge"]})]
Refresh = bool  # bypass the stored copy
Limit = Annotated[int, Field(ge=1, le=50)]
Offset = Annotated[int, Field(ge=0, le=1000)]
DigitsId = schemas.DigitsId  # ASCII digits: REST validates with the same type
Threshold = Annotated[float, Field(ge=0, le=1, description="Minimum similarity.")]
# Ids come from another tool's result: their bounds are checked, not advertised.
VariantId = Annotated[
    str,
    Field(min_length=1, max_length=32),
    WithJsonSchema({"type": "string", "description": "From sdamgia_make_variant."}),
]
Copies = Annotated[int, Field(ge=1, le=MAX_COPIES, description="Each shuffled, with its own key.")]
AskSite = Annotated[
    bool,
    Field(description="Ask the site anyway."),
]


@registry.tool(
    name="sdamgia_get_problem",
    title="Get an exam problem",
    output_model=schemas.ProblemOut,
    read_only=True,
    open_world=True,
)
def get_problem(
    subject: Subject,
    problem_id: Annotated[DigitsId, Field(description="The problem number, e.g. '27340'.")],
    exam: Exam = "ege",
    response_format: Format = "markdown",
    refresh: Refresh = False,
) -> CallToolResult:
    """Get one problem by its number: condition (formulas as text, figure URLs), solution, answer, analogs, codifier."""
    site = site_resolve(subject=subject, exam=exam)
    read = services.problem_read(site=site, problem_id=problem_id, refresh=refresh)
    return problem_respond(read, response_format)


@registry.tool(
    name="sdamgia_check_answer",
    title="Check an answer",
    output_model=schemas.AnswerChecked,
    read_only=True,
    open_world=True,
)
def check_answer(
    subject: Subject,
    problem_id: DigitsId,
    answer: Annotated[str, Field(min_length=1, max_length=500)],
    exam: Exam = "ege",
    reveal: Annotated[bool, Field(description="Give the right answer too.")] = False,
) -> CallToolResult:
    """Is the learner's answer right? Judged as the site does (0,25 = 1/4, alternatives, any case)."""
    site = site_resolve(subject=subject, exam=exam)
    checked = services.answer_check(site=site, problem_id=problem_id, answer=answer, reveal=reveal)
    return respond_json(checked)


@registry.tool(
    name="sdamgia_search_problems",
    title="Search problems by keywords",
    output_model=schemas.SearchOut,
    read_only=True,
    open_world=True,
)
def search_problems(
    subject: Subject,
    query: Annotated[
        str, Field(min_length=3, max_length=500, description="Keywords to search for.")
    ],
    exam: Exam = "ege",
    limit: Limit = 20,
    offset: Offset = 0,
    response_format: Format = "markdown",
    refresh: Refresh = False,
) -> CallToolResult:
    """Search problems by keywords (the site's own search): problem numbers, a page at a time."""
    site = site_resolve(subject=subject, exam=exam)
    outcome = services.problems_search(
        site=site, query=query, limit=limit, offset=offset, refresh=refresh
    )
    return respond(
        formatting.search_as_dict(outcome, offset=offset),
        formatting.search_markdown(outcome, offset=offset),
        response_format,
    )


@registry.tool(
    name="sdamgia_search_by_text",
    title="Find a problem by its text",
    output_model=schemas.FuzzyOut,
    read_only=True,
    open_world=True,
)
def search_by_text(
    subject: Subject,
    condition_text: Annotated[
        str,
        Field(
            min_length=10,
            max_length=1000,
            description="The condition as you have it (OCR errors and typos are fine).",
        ),
    ],
    exam: Exam = "ege",
    threshold: Threshold = 0.6,
    limit: Limit = 20,
    response_format: Format = "markdown",
    refresh: AskSite = False,
    ctx: Context | None = None,
) -> CallToolResult:
    """Find a problem by its condition text (fuzzy): ranked matches. One with differences (other numbers, labels, sin/cos…) is NOT the problem asked: tell the user; never give its answer as theirs."""
    site = site_resolve(subject=subject, exam=exam)
    outcome = fuzzy.problems_search_fuzzy(
        site=site,
        condition_text=condition_text,
        threshold=threshold,
        limit=limit,
        progress=thread_progress(ctx),
        refresh=refresh,
    )
    return respond(
        formatting.fuzzy_as_dict(outcome), formatting.fuzzy_markdown(outcome), response_format
    )


@registry.tool(
    name="sdamgia_search_by_image",
    title="Find a problem from a photo",
    output_model=schemas.ImageSearchOut,
    shape_of="sdamgia_search_by_text",
    read_only=True,
    open_world=True,
)
def search_by_image(
    subject: Subject,
    image_base64: Annotated[
        str | None,
        Field(
            max_length=photo.MAX_BASE64_CHARS,
            description="The photo as base64 or a data URL (or give image_url).",
        ),
    ] = None,
    image_url: Annotated[
        str | None,
        Field(
            max_length=photo.MAX_URL_CHARS,
            description="An http(s) URL of the photo (public hosts only).",
        ),
    ] = None,
    exam: Exam = "ege",
    threshold: Threshold = 0.6,
    limit: Limit = 20,
    response_format: Format = "markdown",
    refresh: AskSite = False,
    ctx: Context | None = None,
) -> CallToolResult:
    """Find a problem from a photo or scan: the result as sdamgia_search_by_text gives it, plus recognized_text (OCR, Russian + English)."""
    site = site_resolve(subject=subject, exam=exam)
    outcome = photo.problems_search_by_image(
        site=site,
        image_base64=image_base64,
        image_url=image_url,
        threshold=threshold,
        limit=limit,
        progress=thread_progress(ctx),
        refresh=refresh,
    )
    return respond(
        formatting.photo_as_dict(outcome), formatting.photo_markdown(outcome), response_format
    )


@registry.tool(
    name="sdamgia_batch_get_problems",
    title="Get several problems",
    output_model=schemas.BatchListed,
    read_only=True,
    open_world=True,
)
def batch_get_problems(
    subject: Subject,
    problem_ids: schemas.ProblemIds,  # schemas.BatchGet: the REST API's body
    exam: Exam = "ege",
    response_format: Format = "markdown",
    refresh: Refresh = False,
    ctx: Context | None = None,
) -> CallToolResult:
    """Get several problems at once; a failing id gets its own error."""
    site = site_resolve(subject=subject, exam=exam)
    items = services.problems_get_many(
        site=site, problem_ids=problem_ids, refresh=refresh, progress=thread_progress(ctx)
    )
    return respond(
        formatting.batch_as_dict(items), formatting.batch_markdown(items), response_format
    )


@registry.tool(
    name="sdamgia_get_catalog",
    title="Exam catalog",
    output_model=schemas.CatalogOut,
    read_only=True,
    open_world=True,
)
def get_catalog(
    subject: Subject,
    exam: Exam = "ege",
    response_format: Format = "markdown",
    refresh: Refresh = False,
) -> CallToolResult:
    """The subject's catalog: exam task types (topics) with their categories, ids and problem counts."""
    site = site_resolve(subject=subject, exam=exam)
    read = catalog.catalog_read(site=site, refresh=refresh)
    return respond(
        formatting.catalog_as_dict(read.value, read.stale),
        formatting.catalog_markdown(read.value, site, read.stale),
        response_format,
    )


@registry.tool(
    name="sdamgia_get_category_problems",
    title="Problems of a category",
    output_model=schemas.CategoryOut,
    read_only=True,
    open_world=True,
)
def get_category_problems(
    subject: Subject,
    category_id: Annotated[DigitsId, Field(description="Category id from the catalog, e.g. '79'.")],
    exam: Exam = "ege",
    limit: Limit = 20,
    offset: Offset = 0,
    response_format: Format = "markdown",
    refresh: Refresh = False,
) -> CallToolResult:
    """Problem numbers of a catalog category."""
    site = site_resolve(subject=subject, exam=exam)
    read = catalog.category_problems_read(
        site=site, category_id=category_id, limit=limit, offset=offset, refresh=refresh
    )
    return respond(
        formatting.category_as_dict(read.value, offset=offset, stale=read.stale),
        formatting.category_markdown(read.value, offset=offset, stale=read.stale),
        response_format,
    )


@registry.tool(
    name="sdamgia_get_test",
    title="Get a test",
    output_model=schemas.TestOut,
    read_only=True,
    open_world=True,
)
def get_test(
    subject: Subject,
    test_id: Annotated[DigitsId, Field(description="The test (variant) number.")],
    exam: Exam = "ege",
    response_format: Format = "markdown",
    refresh: Refresh = False,
) -> CallToolResult:
    """The problem numbers of a test (variant), in order — or a note that its author hid them."""
    site = site_resolve(subject=subject, exam=exam)
    read = catalog.exam_test_read(site=site, test_id=test_id, refresh=refresh)
    return respond(
        formatting.exam_test_as_dict(read.value, read.stale),
        formatting.exam_test_markdown(read.value, read.stale),
        response_format,
    )


@registry.tool(
    name="sdamgia_random_problem",
    title="A random problem",
    read_only=False,
    open_world=True,
)
def random_problem(
    subject: Subject,
    task_number: Annotated[str | None, Field(pattern=r"^\d{1,3}$")] = None,
    category_id: Annotated[DigitsId | None, Field(description="Or a catalog category.")] = None,
    exam: Exam = "ege",
    exclude_seen: Annotated[bool, Field(description="Not one given to you before.")] = True,
    response_format: Format = "markdown",
    reveal: bool = False,  # the answer and solution too (the description says so)
    ctx: Context | None = None,
) -> CallToolResult:
    """A random problem of a task number or a catalog category, as sdamgia_get_problem gives it; answer and solution only with reveal."""
    site = site_resolve(subject=subject, exam=exam)
    read = variants.problem_random(
        user_id=caller_id(ctx),
        site=site,
        task_number=task_number,
        category_id=category_id,
        exclude_seen=exclude_seen,
    )
    if not reveal:
        read = dataclasses.replace(read, value=formatting.problem_hidden(read.value))
    return problem_respond(read, response_format)


@registry.tool(
    name="sdamgia_make_variant",
    title="Make a variant",
    output_model=schemas.VariantMade,
    read_only=False,
    open_world=True,
)
def make_variant(
    subject: Subject,
    tasks: schemas.Tasks,  # schemas.MakeVariant: the REST API's body, the same types
    exam: Exam = "ege",
    seed: schemas.Seed = None,
    source: schemas.Source = "bank",
    ctx: Context | None = None,
) -> CallToolResult:
    """Make a variant: problems by task number from the stored bank, or by the site's constructor; their conditions, no answers."""
    made = variants.variant_create(
        user_id=caller_id(ctx),
        site=site_resolve(subject=subject, exam=exam),
        tasks=tasks,
        seed=seed,
        source=source,
    )
    data = schemas.VariantMade(
        variant=made.public_id,
        seed=made.seed,
        test_id=made.site_test_id or None,
        problem_ids=made.problem_ids,
    )
    return respond(
        data.model_dump(mode="json", exclude_none=True),
        variants.variant_markdown(made),
        "markdown",
    )


@registry.tool(
    name="sdamgia_variant_pdf",
    title="Print a variant",
    output_model=schemas.SheetLink,
    read_only=False,
    idempotent=True,
    open_world=True,
)
def variant_pdf(
    variant: VariantId,
    with_solutions: bool = False,
    copies: Copies = 1,
    ctx: Context | None = None,
) -> CallToolResult:
    """A variant as a PDF to print (answer boxes, the key on its own page): embedded when small, else a resource link; and a web link."""
    from problems import sheets  # reportlab: off the server's start-up

    found = variants.variant_get(user_id=caller_id(ctx), public_id=variant)
    sheet = sheets.variant_sheet(variant=found, with_solutions=with_solutions, copies=copies)
    result = sheet_respond(
        sheet, mcp_content.sheet_uri(found.public_id, with_solutions, copies=copies)
    )
    parts: tuple[tuple[SheetPart, str], ...] = (
        ("sheets", "without the key"),
        ("key", "the answer key alone"),
    )
    for part, title in parts:
        uri = mcp_content.sheet_uri(found.public_id, False, copies=copies, part=part)
        result.content.append(
            ResourceLink(
                type="resource_link", uri=uri, name=f"{found.public_id}-{part}.pdf",
                title=title, mime_type=mcp_content.PDF,
            )
        )  # fmt: skip
    return result


@registry.tool(
    name="sdamgia_check_variant",
    title="Grade a variant",
    output_model=schemas.VariantGraded,
    read_only=True,
    open_world=False,
)
def check_variant(
    variant: VariantId,
    answers: Annotated[
        dict[Annotated[str, Field(max_length=20)], Annotated[str, Field(max_length=500)]],
        Field(description="By number on the sheet (1…) or problem id."),
    ],
    ctx: Context | None = None,
) -> CallToolResult:
    """Grade a learner's answers to a variant: a verdict per task and the primary score."""
    graded = variants.variant_check(user_id=caller_id(ctx), public_id=variant, answers=answers)
    return respond_json(schemas.VariantGraded.model_validate(graded))


def problem_respond(read: Answer[Problem], response_format: str) -> CallToolResult:
    """A problem as `sdamgia_get_problem` gives it (`sdamgia_random_problem` too)."""
    return respond(
        formatting.problem_as_dict(read.value, read.stale),
        formatting.problem_markdown(read.value, stale=read.stale),
        response_format,
    )


def sheet_respond(sheet: StoredSheet, uri: str) -> CallToolResult:
    """A printed sheet for any client: the PDF embedded (`application/pdf`) up to
    `SDAMGIA_PDF_EMBED_MAX` bytes, else a link to the resource `uri` that gives it; the web
    link (served by the web process only) for a browser."""
    size = len(sheet.data)
    embedded = size <= settings.SDAMGIA_PDF_EMBED_MAX
    url = absolute_url(sheet_link(sheet.name))
    result = respond_json(schemas.SheetLink(url=url, resource=uri, size=size, embedded=embedded))
    name = sheet.name.rsplit("/", 1)[-1]
    return file_attach(
        result, data=sheet.data, uri=uri, mime_type=mcp_content.PDF, name=name, embedded=embedded
    )


def caller_id(ctx: Context | None) -> int:
    return int(mcp_caller(ctx).pk or 0)


mcp_content.register(registry)
