"""Synthetic СДАМ ГИА markup built in code (2023 engine markup, STRUCTURE.md §3).

SYNTHETIC: not captured from the site. Used to serve realistic pages from the fake site
whether or not the real fixtures are present.
"""

from __future__ import annotations

from html import escape


def block(
    problem_id: str,
    condition: str,
    *,
    answer: str = "1",
    type_number: str = "1",
    analogs: tuple[str, ...] = (),
    solution: str = "Решение. Очевидно.",
    figure: str = "",
    internal_id: str = "",
) -> str:
    """One div.prob_maindiv block with condition, hidden solution, answer and analogs."""
    internal = internal_id or str(900000 + int(problem_id) % 99999)
    figure_html = f'<img src="{figure}" style="float:right"/>' if figure else ""
    links = " ".join(f'<a href="/problem?id={a}">{a}</a>' for a in analogs)
    return (
        f'<div class="prob_maindiv" id="maindiv{internal}" style="position:relative">'
        '<div class="nobreak"><div style="font-weight:bold">'
        f'<span class="prob_nums">Тип {type_number}\u00a0№\u00a0<a href="/problem?id={problem_id}">{problem_id}</a>'
        ' <img class="briefcase" src="/img/briefcase--plus.png"/></span></div>'
        f'<div align="justify" class="pbody" id="body{internal}"><p class="left_margin">{figure_html}{escape(condition)}</p></div></div>'
        f'<div align="justify" class="pbody" id="sol{problem_id}" style="clear:both;display:none">'
        f"<p>{escape(solution)}</p></div>"
        f'<div class="answer" style="display:none"><span>Ответ: {escape(answer)}</span></div>'
        f'<div class="minor"><p>Аналоги к заданию № <a href="/problem?id={problem_id}">{problem_id}</a>: '
        f'<span id="likes_{problem_id}_short">{links}</span> <a href="/test?likes={problem_id}">Все</a></p></div>'
        "</div>"
    )


def listing(blocks: list[tuple[str, str]], *, page: int, total: int) -> str:
    """A category listing page: (problem_id, block html) pairs, data-page/data-total."""
    items = "".join(
        f'<div class="problem_container" id="problem_{pid}"><div class="prob_num">{n}</div>'
        f'<div class="prob_view">{html}</div></div>'
        for n, (pid, html) in enumerate(blocks, start=1)
    )
    return f'<div class="prob_list" data-total="{total}" data-page="{page}">{items}</div>'


def search_results(blocks: list[str]) -> str:
    """A search result page: the blocks one after another."""
    return (
        '<div class="prob_list">'
        + "".join(f'<div class="prob_view">{b}</div>' for b in blocks)
        + "</div>"
    )


def id_only(problem_id: str) -> str:
    """A result entry that shows only the problem number (no condition)."""
    return f'<div class="prob_maindiv"><span class="prob_nums">Тип 1 № <a href="/problem?id={problem_id}">{problem_id}</a></span></div>'
