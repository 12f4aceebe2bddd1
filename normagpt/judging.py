"""Whether a clause found answers a search: judged by what of the question it holds, not
by its score (a clause on another subject can score higher than the one answering).

`normagpt.search` ranks the clauses answering first and says whether any does; the weights
it passes are the question's stems' (idf, a question's story's already at CONTEXT).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from typing import Protocol

from core.russian import is_noun, may_be_adjective, morphology
from normagpt.everyday import everyday_share
from normagpt.kin import fleeting_bases
from normagpt.lexicon import lexicon
from normagpt.parsing import Query, search_normalize, search_stems
from normagpt.quantities_told import distance_ends


class Found(Protocol):
    """A clause found, as the judge reads it (`search_ranking._Row`)."""

    positions: dict[str, list[int]]  # where each query stem stands in its text
    heading: int  # how many of the positions are its heading's (they come first)
    titled: frozenset[str]  # the query stems its document's title holds


# a clause answers holding this share of the query's weight within this many stems;
# of a whole question's, ANSWERS_SENTENCE (bench/norm_answers.py: real questions and traps)
ANSWERS, ANSWERS_SENTENCE, WINDOW = 0.6, 0.4, 24
NAMED = 0.5  # the share of a keyword phrase's nouns' weight a clause answering holds
# a word of what a whole question asks about counts when it keeps this share of its weight
# as a word of everyday speech (`normagpt.everyday`): a word of the field, not «дом»
THING_SHARE = 0.9
CONTEXT = 0.5  # the weight of the words of a question's story, of their own

# a unit of each dimension a quantity's answer is in (the lexicon's `dimensions`), as a
# clause's text writes it: a word of time (not a year's «года» of a date: «30 декабря 2004
# года»), or «ч» and «с» after a number («24 ч», «10 с»; not a law's part, «п. 13 ч. 3»);
# «м2», «м²», «га», «кв. м», or a share («15 % площади»); «°С», «градусов», and the text
# layer's «*С» for «°С» (ГОСТ 30547 п. 4.1.17); rubles; degrees or a slope («уклон», «1:3»)
# for an angle; a mass, an activity or an amount per volume or mass («6 мг/м3», «Бк/м3»,
# «мг/дм3»; not per area: «80 мБк/(м2·с)» is a flux), ppm, or a share by mass or volume
# for a concentration. A word of a table's
# head counts: its rows give the numbers
_UNITS = {
    "time": re.compile(
        r"(?<![а-яё])(?:сут(?:ки|ок|кам|ках)?|лет|(?<!\d{4}\s)(?<!\d{4})год(?:а|у|ом|ы|ов|ам)?"
        r"|мес(?:яц(?:а|ев|ы|ам)?)?|недел(?:я|и|ю|ь|ей|ям)|дн(?:я|ей|ям)?|день|час(?:а|ов|ы|ам)?"
        r"|мин(?:ут[аыу]?)?|сек(?:унд[аыу]?)?|еже(?:годн|месячн|недельн|дневн|квартальн)\w*)"
        r"(?![а-яё])|\d\s?[чс](?![а-яё])(?!\.\s?\d)",
        re.IGNORECASE,
    ),
    "area": re.compile(r"м\s?2(?!\d)|м²|(?<![а-яё])га(?![а-яё])|кв\.\s?м|%", re.IGNORECASE),
    "temperature": re.compile(r"[°º]|(?<![а-яё])град|\*\s?[сc](?![а-яё])", re.IGNORECASE),
    "money": re.compile(r"(?<![а-яё])руб|₽", re.IGNORECASE),
    "angle": re.compile(r"[°º]|(?<![а-яё])град|уклон|\d\s?:\s?\d", re.IGNORECASE),
    "concentration": re.compile(
        r"(?<![а-яё])(?:мк?г|нг|г|кг|[мк]?бк|ммоль|моль|мг-экв)\s?/\s?\(?(?:м(?!\s?[2²])|дм|см|л|мл|кг|г)"
        r"(?![а-яё])|ppm|%\s?\(?(?:по\s(?:массе|объ[её]му)|об\.|масс\.)"
        r"|(?:объ[её]мн|массов)[а-яё]*\s+дол",
        re.IGNORECASE,
    ),
}
# a quantity in the genitive after these names their difference, another quantity
# («перепад высот до 0,2 м» is no height of what the clause is about)
_DIFFERENCE = ("перепад", "разност", "разниц")


def _named(stems: frozenset[str], words: dict[str, str]) -> frozenset[str]:
    """What names the thing of a phrase: its nouns («блок», «кондиционер» of «наружный блок
    кондиционера»; an adjective qualifies it), all its stems when it has none."""
    return frozenset(s for s in stems if is_noun(words.get(s, s))) or stems


def _heads(query: Query, weights: dict[str, float]) -> frozenset[str]:
    """Each keyword phrase's head: its first noun that is no adjective in any reading
    («наружное освещение»: «освещение»), no quantity (the quantity asked is held apart) and
    no boilerplate, of a word the corpus uses: what the phrase names («штраф за стоянку на
    газоне»: a fine, not a parking on a lawn)."""
    words = lexicon()
    plain = words.generic | words.quantities.keys()
    heads = []
    for phrase in query.phrases:
        for term in phrase:
            word = query.words.get(term, term)
            if term in plain or not weights.get(term) or not is_noun(word):
                continue
            if may_be_adjective(word):
                continue
            heads.append(term)
            break
    return frozenset(heads)


def _twins(
    query: Query, weights: dict[str, float], variants: dict[str, str]
) -> dict[str, set[str]]:
    """Each query word's twins: the other query words its forms (or its norm words') stand
    for in the corpus (`variants`)."""
    return {
        term: twins
        for term in weights
        if (
            twins := {variants[s] for s in (term, *query.said_as.get(term, ())) if s in variants}
            - {term}
        )
    }


def _units(query: Query) -> tuple[re.Pattern[str], ...]:
    """The units of the dimension of each quantity asked (a time, an area, a temperature, a
    sum of money, an angle: the lexicon's `dimensions`), when every quantity asked has one; ()
    otherwise."""
    dimensions = [lexicon().dimensions.get(q) for q in query.quantities]
    if not dimensions or not all(dimensions):
        return ()
    return tuple(_UNITS[d] for d in dict.fromkeys(dimensions) if d)


def _written(query: Query) -> tuple[re.Pattern[str], ...]:
    """Each quantity asked as a text writes it (any ending), unless the query asks a
    difference itself («перепад высот»): then a difference states it."""
    if any(t.startswith(_DIFFERENCE) for t in query.terms):
        return ()
    return tuple(
        re.compile(rf"(?<![а-яё]){re.escape(q)}[а-яё]*", re.IGNORECASE) for q in query.quantities
    )


def _one_side(
    start: frozenset[str], end: frozenset[str], asked: tuple[frozenset[str], frozenset[str]]
) -> bool:
    """Whether both ends `asked` stand at one end of a distance given (from `start` to
    `end`), and neither at the other."""
    a, b = asked
    for here, there in ((start, end), (end, start)):
        if a & here and b & here and not (a & there or b & there):
            return True
    return False


# how far back, within its sentence, a quantity's noun is looked for (`Judge._of_another`)
_BEFORE = 300
_SENTENCE_END = re.compile(r"[.;!?](?=\s)")  # not «:»: a term defined is before it
_WORD = re.compile(r"[а-яёa-z0-9]+")
_UNIT_WORDS = frozenset({"м", "мм", "см", "км", "м2", "м3"})  # a unit pymorphy3 reads otherwise


@functools.lru_cache(maxsize=1024)
def _instrumental(word: str) -> bool:
    """Whether `word` may be a noun in the instrumental («высотой», «диаметром»)."""
    return any(p.tag.POS == "NOUN" and p.tag.case == "ablt" for p in morphology().parse(word))


@functools.lru_cache(maxsize=4096)
def _measured(word: str) -> bool:
    """Whether a quantity in the instrumental after `word` measures it: a noun, a number or
    a unit ending a noun's measure («коридоров высотой», «до 50 кВт высотой»), not a verb's
    («быть высотой»)."""
    return word.isdigit() or word in _UNIT_WORDS or morphology().parse(word)[0].tag.POS == "NOUN"


def _a_difference(text: str, at: int) -> bool:
    """Whether the word at `at` of `text` follows a word naming a difference."""
    before = text[max(0, at - 16) : at].split()
    return bool(before) and before[-1].lower().startswith(_DIFFERENCE)


def _telling_weights(
    query: Query, weights: dict[str, float], never: float | None
) -> dict[str, float]:
    """The weight of each of the query's telling words (not the norms' boilerplate, not a
    number): its idf (a story's weighs CONTEXT already: `clauses_search`). A word the corpus
    never uses: a keyword's, or a noun a whole question asks about, names what the corpus
    has nothing on («ЭРОА радона», «батут»): it weighs `never`, as bm25 weighs a word no
    clause holds (above every word some clause holds); a whole question's other words are
    a person's (most are no norm's): the mean of its words; a story's nothing. Not held, it
    lowers the share as any word would."""
    generic = lexicon().generic
    telling = [t for t in query.terms if t not in generic and not t.isdigit()] or query.terms
    known = [weights[t] for t in telling if t in weights]
    mean = sum(known) / len(known) if known else 1.0

    def unknown(term: str) -> float:
        if term in query.context:
            return 0.0
        if never is None or not known:
            return mean
        if not query.sentence or is_noun(query.words.get(term, term)):
            return never
        return mean

    return {term: weights[term] if term in weights else unknown(term) for term in telling}


def _things(query: Query, weights: dict[str, float]) -> dict[str, set[str]]:
    """What a whole question asks about (`Query.things`, not its story's), in the field's
    words the corpus uses (not an everyday word: THING_SHARE), each with the norm words
    the lexicon gives for it, those that only hold a claim's word too («потолки» of «Какой
    высоты должны быть потолки?» is said by «высота помещений»)."""
    words = lexicon()
    return {
        thing: {thing, *query.said_as.get(thing, ()), *words.said_as(thing, claims=True)}
        for thing in sorted(query.things - query.context)
        if weights.get(thing) and everyday_share(query.words.get(thing, thing)) >= THING_SHARE
    }


def _concepts(query: Query, weights: dict[str, float]) -> list[tuple[dict[str, float], float]]:
    """What each keyword phrase names a thing asked about by: its nouns, with their weights
    (`weights`), and NAMED of their weight, which a clause answering holds (a sentence's
    words name none so)."""
    return [
        (nouns, NAMED * sum(nouns.values()))
        for phrase in query.phrases
        if (stems := frozenset(t for t in phrase if weights.get(t)))
        and (named := _named(stems, query.words))
        # in the phrase's order: a sum in a set's order differs from process to process in
        # its last digit (and a score's tie with it)
        and (nouns := {t: weights[t] for t in phrase if t in named})
    ]


def _owners(
    query: Query, things: dict[str, set[str]], weights: dict[str, float]
) -> dict[str, frozenset[str]]:
    """Each of `things` with the owner the question names after it (`Query.owners`, a word
    the corpus uses): the owner's stem and the norm words for it («блок кондиционера»: the
    unit is named only with «кондиционер» or «кондиционирование»)."""
    return {
        thing: frozenset({owner, *query.said_as.get(owner, ())})
        for thing, owner in query.owners.items()
        if thing in things and weights.get(owner)
    }


def _built_on(stems: Iterable[str]) -> re.Pattern[str]:
    """A word of a text (lower case, «ё» as «е») built on the whole of one of `stems`, or
    of its form with a fleeting vowel («площадок» of «площадк»: `fleeting_bases`)."""
    forms = {form for stem in stems for form in (stem, *fleeting_bases(stem))}
    return re.compile(rf"(?<![а-яё])(?:{'|'.join(map(re.escape, sorted(forms)))})")


def _thing_words(
    things: dict[str, set[str]], owners: dict[str, frozenset[str]]
) -> re.Pattern[str] | None:
    """A word naming one of `things` or its owner (`_built_on`); None for no thing."""
    if not things:
        return None
    return _built_on({w for words in (*things.values(), *owners.values()) for w in words})


def _kinds(things: dict[str, set[str]]) -> list[frozenset[str]]:
    """The stems of the kinds norms name `things` by (the lexicon's `kinds`)."""
    kinds = lexicon().kinds
    return [frozenset(kinds[thing]) for thing in things if thing in kinds]


class Judge:
    """Whether a clause found answers the query: it holds what the query asks, judged by
    what of the query it holds, not by its score (a clause on another subject can score
    higher than the one answering another question).

    A clause answers when it (with its headings and its document's title) holds, of each
    keyword phrase (each names a thing asked about: «штраф за перепланировку»), at least
    NAMED of its nouns' weight (`_named`: «перепланировка» alone is not the fine), the
    quantity asked, one of them when it names several («высота», «уклон»: `normagpt.questions`)
    and at least ANSWERS of the query's weight (ANSWERS_SENTENCE of a whole question's: many of
    its words are not the norm's; each stem's idf; the norms' boilerplate words, «допустимый»,
    «уровень», and numbers weigh nothing here; a keyword or a whole question's noun the corpus
    never uses weighs as bm25 weighs a word no clause holds, a whole question's other words the
    others' mean, nothing in a question's story) within WINDOW stems. A clause looked up by
    its number answers. A word of several keyword phrases («цемент» of «срок хранения цемента»,
    «гарантийный срок хранения цемента») is what they ask about, and a phrase's head
    («штраф» of «штраф за стоянку на газоне»: `_heads`) what it names, and a quantity another
    is asked per («мощность … на площадь»: `Query.per`) part of what is asked: a clause
    answering holds them (where the corpus uses them).
    """

    def __init__(
        self,
        query: Query,
        weights: dict[str, float],
        variants: dict[str, str] | None = None,
        *,
        never: float | None = None,
    ) -> None:
        self.weights = _telling_weights(query, weights, never)
        # a whole question's words are many, few of them the norm's: a lower share answers
        self.share = ANSWERS_SENTENCE if query.sentence else ANSWERS
        self.total = sum(self.weights.values())
        # what a clause's text states of what is asked (`states`): the units of a time, an
        # area or a temperature asked, the quantities asked as the text writes them, the
        # distances asked between two things
        self.units = _units(query)
        self.written = _written(query)
        self.ends = query.ends
        # the quantities asked: a clause stating any of them says what is asked, in its
        # own word or in one norms use for it that the query says too («толщина» said as
        # «слой»: «С какой толщины слоя …» is answered by «… слоем более 20 мм»; a word
        # the query does not say stands for the quantity in the vocabulary already)
        self.quantities = frozenset(query.quantities) | frozenset(
            said
            for quantity in query.quantities
            for said in query.said_as.get(quantity, ())
            if said in self.weights
        )
        self.words = query.words
        # a keyword phrase's word another query word's forms stand for in the corpus
        # (`vocabulary`'s `variants`: «звука» of «звуковые»; «архив», stemmed «арх», said as
        # «архиву»'s «архив»): held where that word is (not a whole question's: its many
        # words would hold more of a clause that does not answer)
        self.twins = _twins(query, self.weights, {} if query.sentence else (variants or {}))
        self.concepts = [] if query.sentence else _concepts(query, self.weights)
        # a word of several keyword phrases is what they all ask about («срок хранения
        # цемента», «гарантийный срок хранения цемента»): a clause answering holds it
        used = [t for phrase in ([] if query.sentence else query.phrases) for t in set(phrase)]
        self.topic = frozenset(
            t for t in set(used) if used.count(t) > 1 and t in self.weights and weights.get(t)
        ) | (frozenset() if query.sentence else _heads(query, self.weights))
        # a quantity asked per another: a clause answering holds the other too
        self.topic |= frozenset(t for t in query.per if t in self.weights)
        self.things = _things(query, weights)  # what a whole question asks about
        # a word of a text built on the whole of a thing's stem or a norm word's for it
        # (`names_thing`; a regex over the text: stemming a hit's text costs ten times more)
        self.own_words = {thing: _built_on(words) for thing, words in self.things.items()}
        self.kinds = _kinds(self.things)  # and the kinds norms name them by
        self.owners = _owners(query, self.things, weights)
        self.thing_words = _thing_words(self.things, self.owners)  # `states_quantity`
        self.of_quantity = query.of_quantity
        self.actions = query.actions if _UNITS["time"] in self.units else ()  # `names_action`
        # the events a time asked is counted from (`names_events`), a regex each
        self.events = tuple(
            _built_on(event) for event in (query.events if _UNITS["time"] in self.units else ())
        )

    def context(self, row: Found) -> frozenset[str]:
        """The query stems the clause's headings and its document's title hold."""
        heading = {term for term, at in row.positions.items() if at[0] < row.heading}
        return frozenset(self._twinned(row.titled.union(heading)))

    def held(self, row: Found) -> set[str]:
        """The query stems the clause, its headings and its document's title hold."""
        return self._twinned(row.positions.keys() | row.titled)

    def _twinned(self, found: set[str] | frozenset[str]) -> set[str]:
        """`found` with the words whose twin it holds (`twins`)."""
        return {*found, *(term for term, twins in self.twins.items() if twins & found)}

    def answers(self, row: Found, *, named: bool) -> bool:
        if named or not self.total:
            return True
        held = self.held(row)
        if self.topic - held:
            return False  # what every phrase asks about (or a phrase's head) it does not say
        for nouns, need in self.concepts:
            if sum(weight for term, weight in nouns.items() if term in held) < need:
                return False  # a thing asked about it says (next to) nothing of
        return self._window_holds(row, self.context(row))

    def names_thing(self, row: Found, text: str) -> bool:
        """Whether the clause (with its headings and title; `text`, its text) names something
        a whole question asks about (`things`; of them the owner of the quantity asked where
        the question names one, `of_quantity`): itself, with its owner where the question
        names one (`owners`: «блок кондиционера»), a norm word the lexicon gives for it, or
        the kind norms name it by (every word of it in `text`: «других хозяйственных
        построек» names a bath-house); True when the question names nothing so (or is no
        whole question). Ranking does not ask it: a clause answering a lay question may name
        the thing in its own words; a clause said to answer must name it («Через сколько лет
        нужно поверять газовый счётчик?» is no table of a gas network's inspections).

        The thing is named in `text` (the clause's heading and text) by a word built on the
        whole of its stem or of a norm word for it («гарантийный» of «гарантия»), or in its
        document's title: not by a longer word sharing only its first letters, which ranking
        takes for one of its forms (`Vocabulary.variants`): «телевизионные камеры» name no
        television set."""
        if not self.things:
            return True
        held = self.held(row)
        plain = search_normalize(text)
        asked = [t for t in self.things if t in self.of_quantity] or list(self.things)
        if any(
            self.things[t] & held
            and self._owned(t, held)
            and (t in row.titled or self.own_words[t].search(plain))
            for t in asked
        ):
            return True
        stems = frozenset(search_stems(text)) if self.kinds else frozenset()
        return any(kind <= stems for kind in self.kinds)

    def names_asked(self, row: Found, text: str) -> bool:
        """Whether a clause (`text`, its text) said to answer by its words names what a
        whole question asks about (`names_thing`), the action whose time it asks
        (`names_action`) and the events that time is counted from (`names_events`)."""
        return self.names_thing(row, text) and self.names_action(text) and self.names_events(text)

    def names_events(self, text: str) -> bool:
        """Whether a clause's `text` names each event a time asked is counted from, by a
        word built on its stem or a norm word's for it (`Query.events`: «постройки» of
        «Через сколько лет после постройки дом признают аварийным»; the Housing Code's
        article on resettling an unsafe house counts no years from a building's
        construction); True when the question asks none. Ranking does not ask it."""
        plain = search_normalize(text)
        return all(event.search(plain) for event in self.events)

    def names_action(self, text: str) -> bool:
        """Whether a clause's `text` names an action whose time a whole question asks
        (`Query.actions`: «замены» of «Через сколько лет нужно менять …», «ликвидации
        аварий» of «За сколько часов должны устранить аварию»); True when it asks none.
        Ranking does not ask it, as `names_thing`."""
        if not self.actions:
            return True
        stems = frozenset(search_stems(text))
        return any(action & stems for action in self.actions)

    def _owned(self, thing: str, held: set[str]) -> bool:
        """Whether `held` holds the owner of `thing` the question names (`owners`), in its
        word or a norm word for it; True when it names none."""
        return thing not in self.owners or bool(self.owners[thing] & held)

    def states(self, text: str) -> bool:
        """Whether a clause's `text`, judged answering by its words, states what is asked: a
        unit of the dimension asked (`states_unit`), a quantity asked not only as a
        difference (`states_quantity`), a distance asked not from both its ends to a third
        thing (`states_distance`)."""
        return self.states_unit(text) and self.states_quantity(text) and self.states_distance(text)

    def states_distance(self, text: str) -> bool:
        """Whether `text` gives a distance asked between two things («от перекрытия до
        натяжного потолка»): not when every distance «от … до …» it gives has both ends
        asked on one side of it («Расстояние от уровня перекрытия (уровня подвесного или
        натяжного потолка) до чувствительного элемента ИП» measures from the two to a third
        thing). True when it gives no distance so written, or asks none."""
        if not self.ends:
            return True
        given = distance_ends(text)
        return not given or not all(
            _one_side(start, end, asked) for start, end in given for asked in self.ends
        )

    def states_quantity(self, text: str) -> bool:
        """Whether `text` writes a quantity asked other than as a difference («перепад
        высот», «разность температур») or as the measure of another thing than the one asked
        (`_of_another`); True when it writes none asked in its own word (it says them in
        the norms' other words) or one elsewhere."""
        found = [m for pattern in self.written for m in pattern.finditer(text)]
        return not found or any(
            not _a_difference(text, m.start()) and not self._of_another(text, m) for m in found
        )

    def _of_another(self, text: str, match: re.Match[str]) -> bool:
        """Whether the quantity written at `match` measures a noun the question does not
        ask about: in the instrumental right after it («в помещениях кухонь, коридоров
        высотой не менее 2,2 м» is the kitchens' height, not a cooker hood's), with no word
        of a thing asked (or its owner) before it in its sentence. False when the question
        names no thing."""
        if self.thing_words is None or not _instrumental(match.group().lower()):
            return False
        before = _SENTENCE_END.split(text[max(0, match.start() - _BEFORE) : match.start()])[-1]
        words = _WORD.findall(search_normalize(before))
        if not words or not _measured(words[-1]):
            return False  # «должна быть высотой …», «принимают шириной …»: the clause's own
        return not self.thing_words.search(" ".join(words))

    def states_unit(self, text: str) -> bool:
        """Whether a clause's `text` writes a unit of the dimension asked («Через сколько
        лет …» is answered in years, months or days, not by how a house is declared unsafe);
        True when the quantity asked has none here (`units`)."""
        return not self.units or any(pattern.search(text) for pattern in self.units)

    def lacks(self, row: Found) -> tuple[str, ...]:
        """The query's words (as written) the clause, its headings and title do not hold:
        what a whole question asks about first (`things`)."""
        held = self.held(row)
        missing = [t for t in self.weights if t not in held]
        missing.sort(key=lambda t: t not in self.things)  # stable: the rest in query order
        return tuple(self.words.get(t, t) for t in missing)

    def _window_holds(self, row: Found, context: frozenset[str]) -> bool:
        """Whether some WINDOW stems of the clause's text hold a quantity asked and, with
        what its headings and title hold, ANSWERS of the query's weight: what is asked is
        said together, not a word here and a word a page on."""
        positions = dict(row.positions)
        for term, twins in self.twins.items():  # a twin's places are the word's too
            if term not in positions and (
                places := [at for t in twins for at in positions.get(t, ())]
            ):
                positions[term] = sorted(places)
        events = sorted(
            (at, term)
            for term, found in positions.items()
            if term not in context
            for at in found
            if at >= row.heading
        )
        base = sum(self.weights.get(t, 0.0) for t in sorted(context))  # the same in any process
        need = self.share * self.total
        # a quantity asked is the clause's (its heading's or text's), not only its
        # document's title's («высотных зданий» states no height); a word of the title is
        # not in `events`, so where the clause says it too, it states it
        headed = context
        if self.quantities and not self.quantities.isdisjoint(context):
            headed = context - (row.titled - self._twinned(set(row.positions)))
        for inside in windows(events, WINDOW):
            if self.quantities and not self.quantities & (inside.keys() | headed):
                continue
            if base + sum(self.weights.get(t, 0.0) for t in inside) >= need:
                return True
        stated = not self.quantities or bool(self.quantities & headed)
        return not events and base >= need and stated


def windows(events: list[tuple[int, str]], span: int) -> Iterator[dict[str, int]]:
    """The query stems within `span` stems of each of `events` (a clause's (place, stem),
    in order), ending there: each stem with how often it stands in the window (one dict,
    updated as the window slides). A window holding the same stems as the one yielded
    before it is not yielded again: what a caller weighs of a window is which stems it
    holds, and a long text repeats the same few (most windows differ only in how often)."""
    start = 0
    inside: dict[str, int] = {}
    for at, term in events:
        changed = term not in inside
        inside[term] = inside.get(term, 0) + 1
        while events[start][0] <= at - span:
            gone = events[start][1]
            inside[gone] -= 1
            if not inside[gone]:
                del inside[gone]
                changed = True
            start += 1
        if changed:
            yield inside
