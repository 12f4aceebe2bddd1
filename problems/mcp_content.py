"""The problem bank beyond tools: problems and catalogs as resources, the seed's workflows
as prompts, completion of subjects, exams and categories (registered on the app's
registry in `problems.mcp_tools`)."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser

from core.mcp_content import prompt_step, prompt_text
from core.registry import ListedResource, ToolRegistry
from problems import catalog, formatting, services, variants
from problems.models import Category, Problem
from problems.sheet_copies import SheetPart, copies_parse
from problems.subjects import ALIASES, EXAMS, SUBJECTS, exam_resolve, site_resolve

EXAM_NAMES = {"ege": ("егэ", "ege"), "oge": ("огэ", "oge")}
# The sheets and the key; "/solutions": with the solutions; "/sheets": the sheets alone (to
# hand out); "/key": the key alone. "?copies=N": N copies, each in an order of its own.
SHEET_URI = "sdamgia://variant/{id}/pdf"
SHEET_PATHS = {"all": "", "sheets": "/sheets", "key": "/key"}
PDF = "application/pdf"


def register(registry: ToolRegistry) -> None:
    registry.resource(
        "sdamgia://{subject}/{exam}/problem/{id}",
        name="sdamgia_problem",
        title="СДАМ ГИА problem",
    )(problem_resource)
    registry.resource(
        "sdamgia://{subject}/{exam}/catalog", name="sdamgia_catalog", title="СДАМ ГИА catalog"
    )(catalog_resource)
    registry.resource("sdamgia://variant/{id}", name="sdamgia_variant", title="Variant")(
        variant_resource
    )
    registry.resource(
        f"{SHEET_URI}{{?copies}}", name="sdamgia_variant_pdf", title="Printed variant",
        mime_type=PDF,
    )(sheet_resource)  # fmt: skip
    registry.resource(
        f"{SHEET_URI}/solutions{{?copies}}", name="sdamgia_variant_pdf_solutions",
        title="Printed variant with solutions", mime_type=PDF,
    )(solved_sheet_resource)  # fmt: skip
    registry.resource(
        f"{SHEET_URI}/sheets{{?copies}}", name="sdamgia_variant_pdf_sheets",
        title="Printed variant without the key", mime_type=PDF,
    )(bare_sheet_resource)  # fmt: skip
    registry.resource(
        f"{SHEET_URI}/key{{?copies}}", name="sdamgia_variant_pdf_key",
        title="Answer key of a printed variant", mime_type=PDF,
    )(key_resource)  # fmt: skip
    registry.lister(recent_problems)
    registry.completer("subject")(subject_complete)
    registry.completer("exam")(exam_complete)
    registry.completer("category_id")(category_complete)
    registry.prompt(name="problems_to_flashcards", title="Problems → flashcards")(
        problems_to_flashcards
    )
    registry.prompt(name="find_problem_from_text", title="Find a problem from its text")(
        find_problem_from_text
    )


def recent_problems(caller: object, limit: int) -> list[ListedResource]:
    """The problems fetched most recently, for a client's "attach" menu."""
    rows = Problem.objects.order_by("-fetched_at", "-id").values_list(
        "subject", "exam", "problem_id", "type_number", "condition_text", "fetched_at"
    )[:limit]
    return [
        ListedResource(
            uri=f"sdamgia://{subject}/{exam}/problem/{problem_id}",
            name=f"sdamgia_problem_{subject}_{exam}_{problem_id}",
            title=f"СДАМ ГИА {subject} {exam.upper()} №{problem_id}"
            + (f", задание {type_number}" if type_number else ""),
            description=" ".join(condition.split())[:160],
            when=fetched_at,
        )
        for subject, exam, problem_id, type_number, condition, fetched_at in rows
    ]


def problem_resource(subject: str, exam: str, id: str) -> str:
    """A problem as Markdown: condition with figure links, solution, answer, codifier.
    Read from the database; fetched from the site when missing or past its TTL (the stored
    copy, marked, when the site fails)."""
    site = site_resolve(subject=subject, exam=exam)
    problem_id = services.problem_id_check(id, field="id")
    read = services.problem_read(site=site, problem_id=problem_id)
    return formatting.problem_markdown(read.value, stale=read.stale)


def variant_resource(id: str, caller: AbstractBaseUser) -> str:
    """A variant of yours: its problems in order with their conditions (no answers)."""
    return variants.variant_markdown(
        variants.variant_get(user_id=int(caller.pk or 0), public_id=id)
    )


def sheet_uri(
    public_id: str, with_solutions: bool, *, copies: int = 1, part: SheetPart = "all"
) -> str:
    """The resource of a variant's printed sheet (`sdamgia_variant_pdf` links to it)."""
    uri = SHEET_URI.format(id=public_id) + SHEET_PATHS[part]
    if with_solutions and part == "all":
        uri += "/solutions"
    return f"{uri}?copies={copies}" if copies > 1 else uri


def sheet_resource(id: str, caller: AbstractBaseUser, copies: str = "1") -> bytes:
    """A variant of yours printed: the PDF (conditions, answer boxes, the answer key);
    `copies`: that many, each in an order of its own with its own key."""
    return _sheet(id, caller, copies=copies, with_solutions=False)


def solved_sheet_resource(id: str, caller: AbstractBaseUser, copies: str = "1") -> bytes:
    """A variant of yours printed with its solutions after the answer key: the PDF."""
    return _sheet(id, caller, copies=copies, with_solutions=True)


def bare_sheet_resource(id: str, caller: AbstractBaseUser, copies: str = "1") -> bytes:
    """A variant of yours printed without its answer key (to hand out): the PDF."""
    return _sheet(id, caller, copies=copies, part="sheets")


def key_resource(id: str, caller: AbstractBaseUser, copies: str = "1") -> bytes:
    """The answer key of a variant of yours printed, each copy's from a page of its own."""
    return _sheet(id, caller, copies=copies, part="key")


def _sheet(
    public_id: str,
    caller: AbstractBaseUser,
    *,
    copies: str,
    with_solutions: bool = False,
    part: SheetPart = "all",
) -> bytes:
    from problems import sheets  # reportlab: off the server's start-up

    number = copies_parse(copies)
    found = variants.variant_get(user_id=int(caller.pk or 0), public_id=public_id)
    return sheets.variant_sheet(
        variant=found, with_solutions=with_solutions, copies=number, part=part
    ).data


def catalog_resource(subject: str, exam: str) -> str:
    """The site's catalog as Markdown: task types with their categories and their ids."""
    site = site_resolve(subject=subject, exam=exam)
    read = catalog.catalog_read(site=site)
    return formatting.catalog_markdown(read.value, site, read.stale)


# --- Completion ----------------------------------------------------------------------------


def subject_complete(value: str, context: dict[str, str]) -> list[str]:
    """Subject codes matching a typed code, Russian name or alias («инф» → inf)."""
    typed = _fold(value)
    exams = [exam_resolve(context["exam"])] if context.get("exam") in EXAMS else list(EXAMS)
    codes = [code for exam in exams for code in SUBJECTS[exam]]
    by_name = [
        code
        for exam in exams
        for code, name in SUBJECTS[exam].items()
        if any(word.startswith(typed) for word in _fold(name).split()) or _fold(name) == typed
    ]
    by_alias = [code for alias, code in ALIASES.items() if alias.startswith(typed)]
    return [c for c in codes if c.startswith(typed)] + by_name + [c for c in by_alias if c in codes]


def exam_complete(value: str, context: dict[str, str]) -> list[str]:
    typed = _fold(value)
    return [code for code, names in EXAM_NAMES.items() if any(n.startswith(typed) for n in names)]


def category_complete(value: str, context: dict[str, str]) -> list[str]:
    """Stored category ids whose title starts with what was typed (or whose id does)."""
    if not context.get("subject"):
        return []
    site = site_resolve(subject=context["subject"], exam=context.get("exam") or "ege")
    typed = _fold(value)
    categories = Category.objects.filter(subject=site.subject, exam=site.exam).order_by(
        "topic__position", "position"
    )
    return [
        category.category_id
        for category in categories
        if _fold(category.title).startswith(typed) or category.category_id.startswith(typed)
    ]


def _fold(text: str) -> str:
    return " ".join(text.lower().replace("ё", "е").split())


# --- Prompts -------------------------------------------------------------------------------


def problems_to_flashcards(
    subject: str,
    topic: str = "",
    category_id: str = "",
    count: str = "10",
    deck: str = "",
    exam: str = "ege",
    language: str = "ru",
) -> str:
    """Make Anki flashcards from СДАМ ГИА problems of a topic or a catalog category.
    Arguments: subject (code or Russian name), topic (words of a category's title) or
    category_id, count (how many problems), deck, exam (ege/oge), language (ru/en)."""
    site = site_resolve(subject=subject, exam=exam)
    where = {"subject": site.subject, "exam": site.exam}
    steps = []
    if not category_id:
        steps.append(
            prompt_step(
                "sdamgia_get_catalog",
                {**where, "response_format": "json"},
                f"выбери категорию, название которой лучше всего подходит к теме «{topic}»"
                if language == "ru"
                else f"pick the category whose title best fits the topic «{topic}»",
            )
        )
    steps.append(
        prompt_step(
            "sdamgia_get_category_problems",
            {**where, "category_id": category_id or "<category id>", "limit": int(count or 10)},
            "возьми номера задач из ответа" if language == "ru" else "take the problem ids",
        )
    )
    problems = [{**where, "id": "<problem id>"}]
    steps.append(
        prompt_step(
            "anki.add_problems",
            {"problems": problems, "deck": deck or "<deck>"},
            "по элементу на каждый номер задачи" if language == "ru" else "one item per id",
        )
    )
    return prompt_text(
        language,
        ru="Сделай карточки Anki из задач СДАМ ГИА. Шаги (инструменты и их аргументы):",
        en="Make Anki flashcards from СДАМ ГИА problems. Steps (tools and their arguments):",
        steps=steps,
        end_ru="Затем скажи, сколько карточек добавлено и сколько пропущено как дубликаты.",
        end_en="Then say how many cards were added and how many were skipped as duplicates.",
    )


def find_problem_from_text(
    subject: str, text: str = "", image_url: str = "", exam: str = "ege", language: str = "ru"
) -> str:
    """Find a СДАМ ГИА problem from its condition: pasted text (typos and OCR errors are
    fine) or a photo's URL. Arguments: subject, text or image_url, exam, language (ru/en)."""
    site = site_resolve(subject=subject, exam=exam)
    where = {"subject": site.subject, "exam": site.exam}
    if image_url:
        first = prompt_step("sdamgia_search_by_image", {**where, "image_url": image_url}, "")
    else:
        first = prompt_step(
            "sdamgia_search_by_text",
            {**where, "condition_text": text or "<the condition>", "response_format": "json"},
            "",
        )
    then = prompt_step(
        "sdamgia_get_problem",
        {**where, "problem_id": "<id of the best match>"},
        "лучшее совпадение" if language == "ru" else "the best match",
    )
    return prompt_text(
        language,
        ru="Найди задачу СДАМ ГИА по её условию. Шаги (инструменты и их аргументы):",
        en="Find the СДАМ ГИА problem from its condition. Steps (tools and their arguments):",
        steps=[first, then],
        end_ru="Покажи условие, ответ и ссылку; если совпадение слабое (score < 0.8), "
        "скажи об этом. Совпадение с различиями (differences: другие числа, обозначения, "
        "синус вместо косинуса…; verdict не same) — другая задача: скажи это пользователю, "
        "назови различия и не выдавай её ответ за ответ на его задачу.",
        end_en="Show the condition, the answer and the link; say so if the match is weak "
        "(score below 0.8). A match with differences (other numbers, labels, sine for "
        "cosine…; verdict not same) is another problem: tell the user, name the "
        "differences, and never give its answer as the answer to theirs.",
    )
