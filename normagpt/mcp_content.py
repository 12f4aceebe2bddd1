"""NormaGPT beyond tools: norm documents, pages and runs as resources, the norms question
as a prompt, completion of document codes (registered in `normagpt.mcp_tools`).

A run read or watched over MCP is the caller's own (staff: any run), as on every channel;
another's run is answered as if it did not exist.
"""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser

from core.exceptions import InvalidInput
from core.mcp_content import prompt_step, prompt_text
from core.registry import ListedResource, ToolRegistry
from normagpt import formatting, selectors
from normagpt.exceptions import PageNotFound
from normagpt.models import AgentRun, NormDocument


def register(registry: ToolRegistry) -> None:
    registry.resource("norms://document/{id}", name="norms_document", title="Norm document")(
        document_resource
    )
    registry.resource("norms://page/{id}", name="norms_page", title="Norm page")(page_resource)
    registry.resource(
        "norms://page/{id}/image", name="norms_page_image", title="Norm page image",
        mime_type="image/jpeg",
    )(page_image_resource)  # fmt: skip
    registry.resource("normagpt://run/{id}", name="normagpt_run", title="NormaGPT run")(
        run_resource
    )
    registry.watcher("normagpt://run/")(run_watch)
    registry.lister(recent_documents)
    registry.lister(own_runs)
    registry.completer("expected_documents", "document")(document_code_complete)
    registry.prompt(name="ask_norms", title="Ask about construction norms")(ask_norms)


def number(value: str, field: str = "id") -> int:
    if not (value.isascii() and value.isdigit()) or len(value) > 18:  # «²» is a digit too
        raise InvalidInput(f"{field} must be a positive whole number, got {value!r}", field=field)
    return int(value)


def document_resource(id: str) -> str:
    """A norm document: code, title, status (replaced by what), and its pages with their
    clauses, each a `norms://page/{id}` resource."""
    document = selectors.document_get(document_id=number(id))
    lines = [f"# {document.code} — {document.title}", ""]
    lines.append(f"Status: {document.status}")
    if document.replaced_by is not None:
        lines.append(f"Replaced by: {document.replaced_by.code}")
    lines.append(f"Pages: {document.page_count}")
    if document.source:
        lines.append(f"Source: {document.source}")
    lines.append("")
    for page in selectors.page_list(document_id=document.pk):
        clauses = ", ".join(page.clauses[:12]) or "—"
        lines.append(f"- page {page.number}: norms://page/{page.pk} (clauses {clauses})")
    return "\n".join(lines)


def page_resource(id: str) -> str:
    """A page of a norm document: its text and clause numbers, with its image as the
    `norms://page/{id}/image` resource and a link to the page on the site."""
    page = selectors.page_get(page_id=number(id))
    document = page.document
    lines = [
        f"# {document.code}, page {page.number}",
        "",
        f"Clauses: {', '.join(page.clauses) or '—'}",
        f"Image: norms://page/{page.pk}/image",
    ]
    link = formatting.page_url(page.pk)
    if link:
        lines.append(f"On the site: {link}")
    if document.source:
        lines.append(f"Source: {document.source}")
    return "\n".join([*lines, "", page.text.strip()])


def page_image_resource(id: str) -> bytes:
    """The page rendered as a JPEG image."""
    page = selectors.page_get(page_id=number(id))
    if not page.image:
        raise PageNotFound(f"page {page.pk} has no image")
    with page.image.open("rb") as handle:
        return bytes(handle.read())


def recent_documents(caller: AbstractBaseUser, limit: int) -> list[ListedResource]:
    """The norm documents added most recently."""
    rows = NormDocument.objects.order_by("-created_at", "-id").values_list(
        "pk", "code", "title", "status", "created_at"
    )[:limit]
    return [
        ListedResource(
            uri=f"norms://document/{pk}",
            name=f"norms_document_{pk}",
            title=f"{code} — {title}"[:200],
            description=f"status: {status}",
            when=created_at,
        )
        for pk, code, title, status, created_at in rows
    ]


def own_runs(caller: AbstractBaseUser, limit: int) -> list[ListedResource]:
    """The caller's own runs, newest first (staff too: their own, not everyone's)."""
    if not caller.is_authenticated:
        return []
    rows = AgentRun.objects.filter(user_id=caller.pk).order_by("-created_at", "-id")
    return [
        ListedResource(
            uri=f"normagpt://run/{public_id}",
            name=f"normagpt_run_{public_id}",
            title=" ".join(question.split())[:120],
            description=f"status: {status}",
            when=created_at,
        )
        for public_id, question, status, created_at in rows.values_list(
            "public_id", "question", "status", "created_at"
        )[:limit]
    ]


def run_resource(id: str, caller: AbstractBaseUser) -> str:
    """A NormaGPT run of yours (its id as `normagpt_ask` returned it), as `normagpt_get_run`
    shows it: status, steps, the answer with its sources."""
    run = selectors.run_get_public(public_id=id, viewer=caller)
    text = formatting.run_markdown(run)
    link = formatting.link("normagpt:run", run.public_id)
    return f"{text}\n\n{link}" if link else text


def run_watch(uri: str, caller: AbstractBaseUser) -> tuple[object, bool]:
    """What changes as a run works (status, node, steps, events) and whether it is done."""
    public_id = uri.removeprefix("normagpt://run/")
    run = selectors.run_get_public(public_id=public_id, viewer=caller)
    snapshot = (run.status, run.next_node, run.steps.count(), run.events.count())
    return snapshot, run.status in AgentRun.FINISHED


def document_code_complete(value: str, context: dict[str, str]) -> list[str]:
    """Codes of the corpus's documents that start with (or contain) what was typed."""
    typed = " ".join(value.lower().split())
    codes = list(NormDocument.objects.order_by("code").values_list("code", flat=True))
    starting = [code for code in codes if code.lower().startswith(typed)]
    return starting + [code for code in codes if typed in code.lower() and code not in starting]


def ask_norms(question: str, expected_documents: str = "", language: str = "ru") -> str:
    """Answer a question on Russian construction norms (ГОСТ, СП, СНиП) citing clauses.
    Arguments: question; expected_documents (codes, comma-separated, optional);
    language (ru/en)."""
    documents = [code.strip() for code in expected_documents.split(",") if code.strip()]
    steps = []
    if documents:
        steps.append(
            prompt_step(
                "normagpt_search_norms",
                {
                    "keywords": ["<2–4 key phrases of the question>"],
                    "expected_documents": documents,
                },
                "посмотри, какие пункты этих документов относятся к вопросу"
                if language != "en"
                else "see which clauses of these documents bear on the question",
            )
        )
    steps.append(prompt_step("normagpt_ask", {"question": question}))
    return prompt_text(
        language,
        ru="Ответь на вопрос по строительным нормам. Шаги (инструменты и их аргументы):",
        en="Answer the question on construction norms. Steps (tools and their arguments):",
        steps=steps,
        end_ru="В ответе ссылайся на пункты: «СП 63.13330.2018, п. 10.3.2, стр. 2» и ссылку на "
        "страницу. Если нормы не отвечают, скажи об этом и задай уточняющие вопросы.",
        end_en="Cite the clauses in the answer: «СП 63.13330.2018, cl. 10.3.2, p. 2» with the "
        "page's link. If the norms do not answer, say so and ask the clarifying questions.",
    )
