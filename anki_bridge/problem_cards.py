"""СДАМ ГИА problems → Anki notes in the default model (`anki.add_problems`).

Prompt: the source text and condition, with the condition's figures as media; Response:
the answer and the solution (with its figures). Both are drawn from the stored HTML
(`card_html`), each formula the site's own SVG inline where it stood: the stored `*_text`
has the formula's spoken alt («дробь: числитель: …») in its place, for search and language
models, never for a card. Context: subject, exam, task type and categories; Sources: the
problem's URL. `dedup_key` `sdamgia:{exam}:{subject}:{id}` makes
a problem one note however often it is sent. Problems come through the problems app's
services (stored copies while fresh, else fetched from the site).
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from anki_bridge.drafts import tags_clean, validation_message
from anki_bridge.notemodel import DEFAULT_MODEL
from anki_bridge.schemas import AddNotesResult, ImageSpec, NoteDetail, NoteInput, ProblemRef
from anki_bridge.services import PROBLEMS_MAX, notes_add_from_model, result_make
from core.exceptions import InvalidInput
from problems.services import (
    Site,
    formula_stand_in,
    is_formula_src,
    plain_formula,
    problem_source_url,
    problems_get_many,
    site_resolve,
    variant_problems_list,
)

if TYPE_CHECKING:
    from anki_bridge.packages import BuiltPackage
    from problems.services import Problem

EXAM_NAMES = {"ege": "ЕГЭ", "oge": "ОГЭ"}


def dedup_key_for(site: Site, problem_id: str) -> str:
    return f"sdamgia:{site.exam}:{site.subject}:{problem_id}"


def _text_html(text: str) -> str:
    return "<br>".join(html.escape(line) for line in text.strip().splitlines())


# What a card keeps of the site's HTML: text, line breaks, sub- and superscripts, bold
# and italic, lists and tables, and the formula images the hub puts in place. Scripts,
# styles, event attributes, classes and links to the site go (a link's text stays).
CARD_TAGS = {
    "p", "br", "div", "span", "center", "b", "strong", "i", "em", "u", "sub", "sup",
    "ul", "ol", "li", "table", "thead", "tbody", "tr", "td", "th", "img",
}  # fmt: skip
CARD_ATTRIBUTES = {
    "img": {"src", "alt"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan"},
}
BLOCKS = {"div", "center", "ul", "ol", "table"}
FORMULA_STYLE = "vertical-align:middle"


def formula_name(url: str) -> str:
    """The media name of a formula image: the site's own file name, which names its
    content, so one formula is one file in every note that shows it."""
    last = urlsplit(url).path.rsplit("/", 1)[-1]
    stem, dot, ext = last.rpartition(".")
    if not dot or not stem:
        stem, ext = last or "formula", "svg"
    return f"sdamgia-formula-{stem}.{ext}"


def card_html(stored: str, *, field: str) -> tuple[str, list[ImageSpec]]:
    """A stored problem's HTML as a card field, and the formula images it shows.

    Sanitized (CARD_TAGS); each formula image stays where it stood, renamed to the media
    file it will be (its `ImageSpec`, whose `ensure_img_tag` rewrite puts the stored
    content-named file in its place; when it cannot be fetched, the formula's plain alt
    or MISSING_FORMULA stands in its place); its spoken alt goes. The figures (the other
    images) are left out: the note adds them below, as the problem lists them."""
    import lxml.html
    import nh3

    clean = nh3.clean(stored, tags=CARD_TAGS, attributes=CARD_ATTRIBUTES, url_relative="deny")
    if not clean.strip():
        return "", []
    root = lxml.html.fragment_fromstring(clean, create_parent="div")
    specs: dict[str, ImageSpec] = {}
    for img in list(root.iter("img")):
        src = img.get("src") or ""
        if not is_formula_src(src):
            img.drop_tree()  # a figure: added below the text
            continue
        alt = img.get("alt") or ""
        name = formula_name(src)
        specs.setdefault(
            src,
            ImageSpec(image_url=src, target_field=field, filename=name).with_stand_in(
                formula_stand_in(alt)
            ),
        )
        img.attrib.clear()
        img.set("src", name)
        img.set("alt", plain_formula(alt))
        img.set("style", FORMULA_STYLE)
    for empty in [p for p in root.iter("p") if not len(p) and not (p.text or "").strip()]:
        empty.drop_tree()
    return _lines(root), list(specs.values())


def _lines(root: Any) -> str:
    """`root`'s content with its top-level paragraphs as lines (`<br>` between them, as a
    card shows text; no paragraph margins); other blocks (a centred formula, a table)
    kept as they are."""
    import lxml.html

    segments: list[tuple[str, bool]] = []  # (html, a block of its own)
    line = html.escape(root.text or "", quote=False)
    for child in root:
        if child.tag == "p" or child.tag in BLOCKS:
            if line.strip():
                segments.append((line.strip(), False))
            if child.tag == "p":
                inner = html.escape(child.text or "", quote=False) + "".join(
                    lxml.html.tostring(c, encoding="unicode") for c in child
                )
                segments.append((inner.strip(), False))
            else:
                segments.append(
                    (lxml.html.tostring(child, encoding="unicode", with_tail=False), True)
                )
            line = html.escape(child.tail or "", quote=False)
        else:
            line += lxml.html.tostring(child, encoding="unicode")
    if line.strip():
        segments.append((line.strip(), False))
    out = ""
    for index, (part, block) in enumerate(segments):
        if index and not block and not segments[index - 1][1]:
            out += "<br>"
        out += part
    return out


def _part(stored_html: str, text: str, *, field: str) -> tuple[str, list[ImageSpec]]:
    """A part of the problem drawn from its HTML; its text (spoken formulas and all)
    only when no HTML was stored."""
    if stored_html.strip():
        return card_html(stored_html, field=field)
    return (_text_html(text) if text.strip() else ""), []


def problem_note(problem: Problem, *, tags: Iterable[str] = (), solution: bool = True) -> NoteInput:
    """The note of one stored problem: its text, line breaks and formulas drawn from the
    stored HTML (each formula the site's own SVG, inline where it stood), its figures as
    images to fetch; `solution`: the solution and its figures below the answer."""
    site = Site(subject=problem.subject, exam=problem.exam)
    source, source_formulas = _part(problem.source_html, problem.source_text, field="Prompt")
    condition, formulas = _part(problem.condition_html, problem.condition_text, field="Prompt")
    prompt = "<br><br>".join(part for part in (source, condition) if part)
    response = [f"<b>Ответ:</b> {html.escape(problem.answer)}" if problem.answer else ""]
    solution_formulas: list[ImageSpec] = []
    if solution:
        drawn, solution_formulas = _part(
            problem.solution_html, problem.solution_text, field="Response"
        )
        response.append(drawn)
    categories = list(problem.categories.select_related("topic"))
    context = [f"{site.name} ({EXAM_NAMES.get(site.exam, site.exam)})"]
    if problem.type_number:
        topic = next((c.topic.title for c in categories if c.topic is not None), "")
        context.append(f"Тип {problem.type_number}" + (f": {topic}" if topic else ""))
    context += [c.title for c in categories if c.title]
    stem = f"sdamgia-{site.exam}-{site.subject}-{problem.problem_id}"
    drawn_formulas = {
        (spec.target_field, spec.filename): spec
        for spec in [*source_formulas, *formulas, *solution_formulas]
    }
    images = (
        list(drawn_formulas.values())
        + [
            ImageSpec(image_url=url, target_field="Prompt", filename=f"{stem}-{n}")
            for n, url in enumerate(problem.figures, start=1)
        ]
        + [
            ImageSpec(image_url=url, target_field="Response", filename=f"{stem}-s{n}")
            for n, url in enumerate(problem.solution_figures if solution else (), start=1)
        ]
    )
    return NoteInput(
        fields={
            "Prompt": prompt,
            "Response": "<br><br>".join(part for part in response if part),
            "Context": " · ".join(context),
            "Sources": problem_source_url(problem=problem),
        },
        tags=tags_clean(["sdamgia", f"{site.subject}-{site.exam}", *tags]),
        images=images,
        dedup_key=dedup_key_for(site, problem.problem_id),
    )


def refs_parse(problems: Sequence[ProblemRef | Mapping[str, Any]]) -> list[tuple[Site, str]]:
    if not problems:
        raise InvalidInput("problems must hold at least one problem", field="problems")
    if len(problems) > PROBLEMS_MAX:
        raise InvalidInput(f"problems holds at most {PROBLEMS_MAX} problems", field="problems")
    refs = []
    for i, raw in enumerate(problems):
        try:
            ref = raw if isinstance(raw, ProblemRef) else ProblemRef.model_validate(raw)
        except ValidationError as exc:
            path, message = validation_message(f"problems[{i}]", exc)
            raise InvalidInput(message, field=path) from exc
        try:
            site = site_resolve(subject=ref.subject, exam=ref.exam)
        except InvalidInput as exc:
            raise InvalidInput(
                f"problems[{i}]: {exc.message}", field=f"problems[{i}].{exc.field}"
            ) from exc
        refs.append((site, ref.id))
    return refs


def problems_add(
    *,
    problems: Sequence[ProblemRef | Mapping[str, Any]],
    deck: str | None = None,
    tags: Sequence[str] = (),
    owner: int | None = None,
) -> AddNotesResult:
    """Notes for СДАМ ГИА problems, journaled as `owner`'s; a problem that cannot be read
    gets its own error."""
    refs = refs_parse(problems)
    by_site: dict[Site, list[str]] = defaultdict(list)
    for site, problem_id in refs:
        by_site[site].append(problem_id)
    found: dict[tuple[Site, str], Problem] = {}
    errors: dict[tuple[Site, str], str] = {}
    for site, ids in by_site.items():
        for item in problems_get_many(site=site, problem_ids=ids):
            if item.problem is not None:
                found[(site, item.problem_id)] = item.problem
            else:
                errors[(site, item.problem_id)] = item.error or "the problem could not be read"
    notes: list[NoteInput] = []
    positions: list[int] = []
    details: dict[int, NoteDetail] = {}
    for i, (site, problem_id) in enumerate(refs):
        key = (site, problem_id)
        if key in found:
            notes.append(problem_note(found[key], tags=tags))
            positions.append(i)
        else:
            details[i] = NoteDetail(
                index=i,
                status="error",
                dedup_key=dedup_key_for(site, problem_id),
                error=f"{site.label} problem {problem_id}: {errors.get(key, 'not found')}",
            )
    if notes:
        added = notes_add_from_model(
            items=notes,
            deck=deck,
            model=DEFAULT_MODEL.name,
            source="anki.add_problems",
            owner=owner,
        )
        for detail in added.details:
            detail.index = positions[detail.index]
            details[detail.index] = detail
    return result_make([details[i] for i in range(len(refs))])


def variant_package_build(
    *, user_id: int, variant: str, deck: str | None = None, solutions: bool = True
) -> BuiltPackage:
    """A teacher's deck of a variant of `user_id`'s (issue 53, item 2): a card per problem
    in the variant's order, its condition and figures on the front, the answer (and the
    solution when `solutions`) on the back; the deck named after the variant unless
    `deck` is given."""
    from anki_bridge.packages import package_build

    found, stored = variant_problems_list(user_id=user_id, public_id=variant)
    notes = [
        problem_note(problem, tags=[f"variant-{found.public_id}"], solution=solutions)
        for problem in stored
    ]
    site = Site(subject=found.subject, exam=found.exam)
    default = f"СДАМ ГИА::{site.name} {EXAM_NAMES.get(site.exam, site.exam)}::Вариант {variant}"
    return package_build(items=notes, deck=deck or default, model=DEFAULT_MODEL.name)
