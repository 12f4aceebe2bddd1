"""Questions on a built corpus of `bench/norm_corpus.py`: each asks for a fact its
documents state — naming no document, naming it by code, by a short name (alias), asking
a row of a table, or naming the clause by number — or, a trap, for a condition no clause
states; each carries the keywords a planner would search with and knows its answers."""

from __future__ import annotations

import random
from typing import Any

from bench.norm_corpus_records import BOUND, Document, Fact, FactKey, PageWriter, Place, Question


class CorpusQuestions:
    """The questions half of `CorpusBuilder`: it asks about the facts the builder recorded
    while writing its documents (`places`, `facts`), in the builder's words (`_fill`)."""

    domains: list[dict[str, Any]]
    places: dict[FactKey, list[Place]]
    facts: dict[FactKey, Fact]
    documents: list[Document]

    def _domain(self, name: str) -> dict[str, Any]:
        raise NotImplementedError

    def _fill(
        self,
        template: str,
        domain: dict[str, Any],
        rng: random.Random,
        out: PageWriter,
        *,
        subject: dict[str, str] | None = None,
        **values: str,
    ) -> str:
        raise NotImplementedError

    def questions(self, *, count: int = 100, traps: int = 20, seed: int = 7) -> list[Question]:
        """`count` questions on facts the built documents state, and `traps` on conditions
        none states (call after `build`)."""
        rng = random.Random(seed)
        share = {"no_document": 0.3, "code": 0.2, "alias": 0.2, "table": 0.2, "number": 0.1}
        asked: set[FactKey] = set()
        out: list[Question] = []
        for kind, part in share.items():
            made = 0
            while made < round(count * part):
                question = getattr(self, f"_ask_{kind}")(rng)
                if question is None or (question.fact and question.fact.key in asked):
                    continue
                if question.fact:
                    asked.add(question.fact.key)
                out.append(question)
                made += 1
        out += [self._ask_trap(rng) for _ in range(traps)]
        return out

    def _stated(self, rng: random.Random, *, table: bool) -> tuple[Fact, dict[str, Any]]:
        keys = [
            key
            for key, places in self.places.items()
            if key.prop.startswith("table:") == table and any(p.in_force for p in places)
        ]
        key = rng.choice(sorted(keys, key=lambda k: (k.domain, k.prop, k.subject, k.condition)))
        return self.facts[key], self._domain(key.domain)

    def _question(
        self, fact: Fact, domain: dict[str, Any], rng: random.Random, kind: str
    ) -> Question:
        prop = next(p for p in domain["properties"] if p["id"] == fact.key.prop)
        subject = next(s for s in domain["subjects"] if s["id"] == fact.key.subject)
        condition = next(c for c in domain["conditions"] if c["id"] == fact.key.condition)
        return self._on(prop, subject, condition, domain, rng, kind, fact)

    def _on(
        self,
        prop: dict[str, Any],
        subject: dict[str, str],
        condition: dict[str, str],
        domain: dict[str, Any],
        rng: random.Random,
        kind: str,
        fact: Fact | None,
    ) -> Question:
        fill = {"ask": condition["ask"], "condition": condition["text"]}
        writer = PageWriter("q")
        text = self._fill(
            rng.choice(prop["question"]), domain, rng, writer, subject=subject, **fill
        )
        templates = list(rng.choice(prop["keywords"]))
        if not any("{subject" in k for k in templates):
            templates.insert(1, "{subject:nom_pl}")  # the question names it: so does a planner
        keywords = [self._fill(k, domain, rng, writer, subject=subject, **fill) for k in templates]
        places = [p for p in self.places.get(fact.key, []) if p.in_force] if fact else []
        value = (
            f"{BOUND.get(prop.get('bound', 'exact'), '')} {fact.value} {fact.unit}" if fact else ""
        )
        return Question(
            kind, text, keywords, [], places, " ".join(value.split()), fact, subject,
            condition["text"], condition["ask"], prop,
        )  # fmt: skip

    def _ask_no_document(self, rng: random.Random) -> Question | None:
        fact, domain = self._stated(rng, table=False)
        return self._question(fact, domain, rng, "no_document")

    def _narrowed(self, question: Question, rng: random.Random) -> str:
        """One document stating the question's fact: its code; the answers narrowed to it."""
        code = rng.choice(sorted({p.code for p in question.answers}))
        question.answers = [p for p in question.answers if p.code == code]
        return code

    def _ask_code(self, rng: random.Random) -> Question | None:
        fact, domain = self._stated(rng, table=False)
        question = self._question(fact, domain, rng, "code")
        code = self._narrowed(question, rng)
        question.text = f"{question.text.rstrip('?')} по {code}?"
        question.expected_documents = [code]
        return question

    def _ask_alias(self, rng: random.Random) -> Question | None:
        fact, domain = self._stated(rng, table=False)
        question = self._question(fact, domain, rng, "alias")
        code = self._narrowed(question, rng)
        alias = short_name(code, rng)
        question.text = f"{question.text.rstrip('?')} по {alias}?"
        if rng.random() < 0.5:
            question.expected_documents = [alias]
        else:
            question.keywords = [*question.keywords, alias]
        return question

    def _ask_table(self, rng: random.Random) -> Question | None:
        fact, domain = self._stated(rng, table=True)
        title = fact.key.prop.removeprefix("table:")
        table = next(t for t in domain["tables"] if t["title"] == title)
        row = int(fact.key.subject)
        ask = table["row_ask"][row]
        text = table["question"].replace("{row_ask}", ask)
        places = [p for p in self.places[fact.key] if p.in_force]
        keywords = [title.split(",")[0], ask]
        if "таблиц" in text:
            keywords.append("таблица")  # the question asks for a table: so does a planner
        in_force = frozenset(d.code for d in self.documents if d.in_force)
        return Question(
            "table", text, keywords, [], places, fact.value, fact,
            {}, table["rows"][row][0], ask, {"nom": title}, in_force,
        )  # fmt: skip

    def _ask_number(self, rng: random.Random) -> Question | None:
        fact, domain = self._stated(rng, table=False)
        question = self._question(fact, domain, rng, "number")
        code = self._narrowed(question, rng)
        [place] = question.answers[:1]
        question.text = f"Что устанавливает п. {place.number} {code}?"
        question.keywords = [f"п. {place.number}"]
        question.expected_documents = [code]
        return question

    def _ask_trap(self, rng: random.Random) -> Question:
        domain = rng.choice(self.domains)
        props = [p for p in domain["properties"] if p.get("trap_conditions")]
        prop = rng.choice(props)
        chosen = rng.choice(prop["subjects"])
        subject = next(s for s in domain["subjects"] if s["id"] == chosen)
        trap = rng.choice(prop["trap_conditions"])
        return self._on(prop, subject, trap, domain, rng, "trap", None)


def short_name(code: str, rng: random.Random) -> str:
    """A short name people give a document: «СП 63», «сп63», «63.13330», «ГОСТ 10180»."""
    kind, number = code.split(" ", 1)
    if kind == "СП":
        first, series = number.split(".")[:2]
        return rng.choice([f"СП {first}", f"сп{first}", f"{first}.{series}"])
    if kind == "ГОСТ":
        return f"ГОСТ {number.split('-')[0]}"
    return f"{kind} {number.rsplit('-', 1)[0]}"
