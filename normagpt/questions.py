"""How a question is read before it is searched: people ask in whole sentences and in their
own words («через сколько можно распалубить перекрытие зимой?»), norms word it otherwise
(«снятие опалубки … в зимних условиях»).

The lexicon (`normagpt.lexicon`, data) gives the words that say nothing of what is asked
(left out), the quantity a question asks for and the words norms use for it, lay words with
theirs.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import replace
from typing import Any

from core.russian import ADJECTIVES, is_noun, morphology
from normagpt.kin import stems_kin
from normagpt.lexicon import Lexicon, lexicon
from normagpt.parsing import Query, query_parse, search_stems, word_stem
from normagpt.quantities_told import distance_ends, per_asked, quantities_asked


def question_read(keywords: list[str]) -> Query:
    """`keywords` read as a search (`_question_read`); a copy of its own to change: the
    search and its result's reader both read the same keywords, the same words recur."""
    return replace(_question_read(tuple(keywords)))


@functools.lru_cache(maxsize=512)
def _question_read(keywords: tuple[str, ...]) -> Query:
    """`keywords` (a list of phrases, or a whole question) read as a search
    (`parsing.query_parse`): the lexicon's filler left out, the quantity asked found, and
    each stem's norm wordings attached. A phrase of filler alone is kept as it is (the
    search would hold nothing else).

    A keyword of several sentences is a question told with its story («Строим дом в
    Подмосковье. Какой толщины …?»): each sentence a phrase, its words of talk left out; the
    question's own sentence is what is asked (`_asking`), the others' words are its `context`
    (they weigh less, do not decide the quantity asked), but for what a pronoun of the
    question stands for («Хочу посадить дерево. На каком расстоянии от дома его сажать?»)."""
    pieces: list[str] = []
    asking_sentences: list[str] = []  # what the things and actions asked are read from
    told: list[str] = []
    spoken_of: set[str] = set()  # the stems of what the asking sentences' pronouns stand for
    words = lexicon()
    keywords = tuple(words.asking_read(keyword) for keyword in keywords)
    for keyword in keywords:
        sentences = [p.strip() for p in _SENTENCE.split(keyword) if p.strip()]
        if len(sentences) < 2:
            pieces.append(_told_plainly(keyword))
            asking_sentences.append(keyword)
            continue
        plain = [_told_plainly(p, whole=True) for p in sentences]
        asking = _asking(sentences, plain)
        meant = [word for i in asking for word in _antecedents(sentences, i)]
        pronouns = [" ".join(meant)] if meant else []  # what the pronouns stand for
        pieces += [*(plain[i] for i in asking), *pronouns]
        asking_sentences += [*(sentences[i] for i in asking), *pronouns]
        spoken_of.update(search_stems(" ".join(meant)))
        told += [p for i, p in enumerate(plain) if i not in asking]
    query = query_parse(pieces)
    phrases = [[s for s in phrase if s not in words.filler] or phrase for phrase in query.phrases]
    query.quantities = quantities_asked(keywords, phrases, words)
    query.quantity = next(iter(query.quantities), "")
    query.per = tuple(dict.fromkeys(s for keyword in keywords for s in per_asked(keyword, words)))
    if told:
        story = query_parse(told)
        for stem, word in story.words.items():
            query.words.setdefault(stem, word)
        asked = {stem for phrase in phrases for stem in phrase}
        # what a pronoun stands for is asked once, as its own phrase: the story's telling
        # of it would make it a topic every answering clause must name (`judging.Judge`)
        left = words.filler | spoken_of
        phrases += [kept for phrase in story.phrases if (kept := _kept(phrase, left))]
        query.context = frozenset(s for p in phrases for s in p) - asked
        query.documents = list(dict.fromkeys([*query.documents, *story.documents]))
        query.clauses = list(dict.fromkeys([*query.clauses, *story.clauses]))
    query.phrases = phrases
    query.sentence = any(_is_sentence(keyword) for keyword in keywords)
    if query.sentence:
        _asked_of(query, asking_sentences, words)
    query.ends = tuple(end for keyword in keywords for end in distance_ends(keyword))
    query.said_as = {
        stem: said
        for stem in query.terms
        if (said := _said_as(stem, query.words.get(stem, stem), words, cut=not query.sentence))
    }
    query.apart = _words_apart(query.terms, query.words)
    return query


def _said_as(stem: str, word: str, words: Lexicon, *, cut: bool) -> tuple[str, ...]:
    """The stems a query's stem stands for besides itself: a noun's other forms as the
    corpus stems them («шов» → «швов», «лёд» → «льда»; with `cut`, «архив» → «архива»: a
    stem alone misses them) and the lexicon's words for it."""
    found = [*_noun_forms(word, cut=cut), *words.said_as(stem)]
    return tuple(dict.fromkeys(s for s in found if s != stem))


def _words_apart(terms: list[str], written: dict[str, str]) -> frozenset[str]:
    """Those of `terms` kin to another (`stems_kin`) whose word (`written`: a stem's word
    as the query wrote it) is another word (its dictionary form differs)."""
    return frozenset(
        term
        for term in terms
        if term in written
        and any(
            other != term
            and other in written
            and stems_kin(other, term)
            and lemma(written[other]) != lemma(written[term])
            for other in terms
        )
    )


@functools.lru_cache(maxsize=4096)
def lemma(word: str) -> str:
    """`word`'s dictionary form (its likeliest reading), «ё» as «е»."""
    return str(morphology().parse(word)[0].normal_form).replace("ё", "е")


@functools.lru_cache(maxsize=4096)
def _noun_forms(word: str, *, cut: bool = True) -> tuple[str, ...]:
    """The stems of a noun's forms, as `search_stems` makes them, where the stemmer leaves
    them apart: a short noun's («шов», «шва», «швов»; «лёд», «льда») and a noun whose stem
    it cuts into the root, as a verb's or a gerund's ending («архив»: «арх», «архива»:
    «архив»; «профили»: «проф»; «материал»: «материа»); () for another word (a longer
    word's forms share a stem or its first letters: `search_candidates.vocabulary_read`
    finds those). The stemmer is slow on a word it has not seen: the forms are stemmed only
    for such nouns, told by what their dictionary form holds beyond the word's stem. Not
    `cut`: a short noun's and one ending as a verb does (`_VERB_CUT`) only (a whole
    question's words: its other forms made its many words hold more of a clause that does
    not answer, traps of the held-out benchmark sets among them)."""
    parsed = morphology().parse(word)[0]
    if parsed.tag.POS != "NOUN":
        return ()
    normal = parsed.normal_form.replace("ё", "е")
    stem = word_stem(word)
    if len(word) <= SHORT + 2 and len(normal) <= SHORT:  # every form: they are few and short
        forms = dict.fromkeys(form.word for form in parsed.lexeme)
    elif fleeting := _fleeting(parsed):  # «песок», «песка»; «уровень», «уровня»
        forms = dict.fromkeys([word, *fleeting])
    elif (not cut and not normal.endswith(_VERB_CUT)) or (
        normal.startswith(stem) and normal[len(stem) :] in _NOUN_ENDINGS
    ):
        return ()
    else:  # the forms its other stem is in: the singular's genitive, the plural
        found = (
            parsed.inflect({"gent", "sing"}),
            parsed.inflect({"nomn", "plur"}),
            parsed.inflect({"gent", "plur"}),
        )
        forms = dict.fromkeys([word, *(form.word for form in found if form is not None)])
    stems = tuple(dict.fromkeys(word_stem(form) for form in forms))
    return stems if len(stems) > 1 else ()


def _fleeting(parsed: Any) -> list[str]:
    """A noun's forms on both sides of a vowel it drops («песок», «песка»; «щебень»,
    «щебня»; «уровень», «уровня») or of a plural of another root («человек», «люди»;
    «ребёнок», «дети»): its dictionary form, the singular's genitive and the plural's two
    cases, when the stem of the first is not the start of the second's or the plural's, nor
    theirs its start; [] for another noun."""
    single = parsed.inflect({"nomn", "sing"})
    genitive = parsed.inflect({"gent", "sing"})
    if single is None or genitive is None:
        return []
    plural = [parsed.inflect({case, "plur"}) for case in ("nomn", "gent")]
    a = word_stem(single.word)
    others = [genitive.word, *(form.word for form in plural[:1] if form is not None)]
    if all(a.startswith(b) or b.startswith(a) for b in map(word_stem, others)):
        return []
    return [single.word, genitive.word, *(form.word for form in plural if form is not None)]


SHORT = 4  # a noun this long or shorter: the stemmer leaves its forms apart
# a noun ending so loses it to the stemmer, as a verb's ending («объём»: «объ», «объёма»:
# «объем»; «водоём», «подъём»): its forms are searched even in a whole question
_VERB_CUT = "ем"
# what a noun's dictionary form ends in beyond the stem the stemmer leaves of its forms
_NOUN_ENDINGS = frozenset(
    {"", "а", "я", "о", "е", "ь", "й", "и", "ы", "ие", "ия", "ье", "ья", "ий", "ей", "ой"}
)


# what a sentence's word does, by its part of speech (pymorphy3's tags): verbs, pronouns,
# adverbs, particles, numerals in words… tell how a person talks, not what a norm says
_TALK = frozenset(
    {"VERB", "INFN", "PRTS", "NPRO", "ADVB", "PRCL", "CONJ", "INTJ", "PRED", "NUMR", "GRND", "COMP"}
)
_WORD_RE = re.compile(r"[А-Яа-яЁё]+(?:-[А-Яа-яЁё]+)*")
SENTENCE_WORDS = 5  # a keyword of this many words or more is a sentence


def word_of_talk(word: str) -> bool:
    """Whether `word` tells how a person talks, not what a norm says: the lexicon's filler,
    a verb, pronoun, adverb, numeral («шести», «шестого») and their kin (`_TALK`)."""
    stems = search_stems(word)
    if not stems or stems[0] in lexicon().filler:
        return True
    if stems[0] in lexicon().named:
        return False
    tag = morphology().parse(word)[0].tag
    return tag.POS in _TALK or "Anum" in tag


def _asking(sentences: list[str], plain: list[str]) -> list[int]:
    """Which of a question's `sentences` (`plain`: without their words of talk) ask: those
    asking («?») about something (a word that is neither talk, filler nor the norms'
    boilerplate: not «Что говорят нормы?»), else the last that names something."""
    named = [i for i, p in enumerate(plain) if _names(p)]
    return [i for i in named if sentences[i].endswith("?")] or named[-1:] or [len(plain) - 1]


# a third person's pronoun (personal or possessive) by form: the genders (or the plural)
# of the nouns it may stand for
_PRONOUNS = {
    **dict.fromkeys(("он", "него", "нему", "ним", "нём"), frozenset({"masc"})),
    **dict.fromkeys(("оно",), frozenset({"neut"})),
    **dict.fromkeys(("его", "ему"), frozenset({"masc", "neut"})),
    **dict.fromkeys(
        ("она", "её", "ее", "неё", "нее", "ей", "ней", "ею", "нею"), frozenset({"femn"})
    ),
    **dict.fromkeys(("они", "их", "них", "ими", "ними"), frozenset({"plur"})),
}
_NAMING = frozenset({"nomn", "accs"})  # the cases of what a sentence is about


def _antecedents(sentences: list[str], asking: int) -> list[str]:
    """The nouns a pronoun of the asking sentence stands for: those of the nearest sentence
    before it naming any, that agree with the pronoun and are its subject or object (in
    the nominative or accusative, no preposition before: «Через подвал дома проходит
    теплотрасса. Насколько горячей может быть поверхность её изоляции?» → «теплотрасса»),
    with their adjectives."""
    said = {word.lower() for word in _WORD_RE.findall(sentences[asking])}
    kinds = frozenset().union(*(_PRONOUNS[w] for w in said if w in _PRONOUNS))
    if not kinds:
        return []
    for sentence in reversed(sentences[:asking]):
        words = _WORD_RE.findall(sentence)
        tags = [morphology().parse(word)[0].tag for word in words]
        nouns: list[str] = []
        for at, (word, tag) in enumerate(zip(words, tags, strict=True)):
            if tag.POS != "NOUN" or tag.case not in _NAMING:
                continue
            kind = "plur" if tag.number == "plur" else tag.gender
            if kind not in kinds or word_of_talk(word):
                continue
            start = at  # with the adjectives before it that agree («тепловой пункт»)
            while start and _agrees(words[start - 1], tag.case):
                start -= 1
            if start and tags[start - 1].POS == "PREP":
                continue  # a place or a means («через крышу»), not what is spoken of
            nouns += words[start : at + 1]
        if nouns:
            return nouns
    return []


_VERBS = frozenset({"INFN", "VERB"})


def _agrees(word: str, case: str) -> bool:
    """Whether `word` may be an adjective in `case` (any of its readings)."""
    return any(p.tag.POS in ADJECTIVES and p.tag.case == case for p in morphology().parse(word))


def _things_asked(sentence: str, words: Lexicon) -> list[tuple[str, bool]]:
    """The nouns `sentence` asks about: the owner of a quantity asked (the noun in the
    genitive after it, past its adjectives: «концентрация радона», «производительность
    вытяжки»), and its subject and object nouns (the nominative or accusative, no
    preposition before them and their adjectives: «счётчик» of «Через сколько лет нужно
    поверять газовый счётчик?»; not the place or means of «над газовой плитой»), no
    quantity and no word of talk; each with whether it owns the quantity."""
    found = _WORD_RE.findall(sentence)
    tags = [morphology().parse(word)[0].tag for word in found]
    things: list[tuple[str, bool]] = []
    for at, word in enumerate(found):
        stem = search_stems(word)[:1]
        quantity = bool(stem) and stem[0] in words.quantities
        if quantity:
            after = at + 1
            while after < len(found) and tags[after].POS in ADJECTIVES:
                after += 1
            if after < len(found) and _genitive_noun(found[after]):
                things.append((found[after], True))
            continue
        if not _naming_noun(word) or word_of_talk(word):
            continue
        start = at
        while start and tags[start - 1].POS in ADJECTIVES:
            start -= 1
        if not (start and tags[start - 1].POS == "PREP"):
            things.append((word, False))
    return things


def _asked_of(query: Query, sentences: list[str], words: Lexicon) -> None:
    """`query` told what a whole question's asking `sentences` ask about (`things`, of them
    the owners of the quantity, `of_quantity`: `_things_asked`), the actions they ask the
    time of, each as the stems norms name it by (`actions`: `_actions_asked`), and the
    owners they name of what they ask about (`owners`: `_owners`)."""
    things = [thing for sentence in sentences for thing in _things_asked(sentence, words)]
    verbs = [verb for sentence in sentences for verb in _actions_asked(sentence, words)]
    related = [pair for sentence in sentences for pair in _owners_related(sentence)]
    # a relative clause's subject says whose the thing is, it is not asked about itself
    query.things = _thing_stems([word for word, _ in things], words) - {o for _, o in related}
    query.of_quantity = _thing_stems([word for word, owns in things if owns], words)
    query.actions = tuple(words.actions[verb] for verb in dict.fromkeys(verbs))
    events = dict.fromkeys(event for sentence in sentences for event in _events_asked(sentence))
    query.events = tuple(
        frozenset({stem, *_said_as(stem, word, words, cut=False)})
        for word in events
        for stem in search_stems(word)[:1]
    )
    asks = frozenset(query.quantities)
    owned = [
        pair
        for sentence in sentences
        for pair in _owners(sentence, located=bool(asks.intersection(search_stems(sentence))))
    ] + related
    query.owners = {head: owner for head, owner in owned if head in query.things}


def _actions_asked(sentence: str, words: Lexicon) -> list[str]:
    """The verbs of `sentence` (their dictionary form) whose action the lexicon names
    (`actions`): «чистить» of «Как часто по нормам их нужно чистить?»."""
    parse = morphology().parse
    verbs = (parse(word)[0] for word in _WORD_RE.findall(sentence))
    lemmas = (v.normal_form.replace("ё", "е") for v in verbs if v.tag.POS in _VERBS)
    return [lemma for lemma in lemmas if lemma in words.actions]


# «после» and the next two words: the event a time is counted from is a noun among them
_AFTER = re.compile(r"(?<![а-яё])после\s+([а-яё]+)(?:\s+([а-яё]+))?", re.I)


def _events_asked(sentence: str) -> list[str]:
    """The nouns of `sentence` a time is counted from: the first noun that is no word of
    talk after «после» («после постройки», «после одного нажатия»)."""
    found = []
    for m in _AFTER.finditer(sentence):
        nouns = [w for w in m.groups() if w and is_noun(w) and not word_of_talk(w)]
        found += nouns[:1]
    return found


def _owners(sentence: str, *, located: bool = False) -> list[tuple[str, str]]:
    """The stems of (noun, owner) of `sentence`'s nouns in the nominative or accusative a
    noun in the genitive follows, its owner («наружный блок кондиционера»: блок,
    кондиционер), by their likeliest reading; where the sentence asks the quantity
    (`located`), a place «на» or «в» one follows too («лёд на пруду»: лёд, пруд). A place
    named in another sentence is the story's («стекло в душевой» of a question asking, in
    its next sentence, how many fragments a tempered glass breaks into)."""
    found = _WORD_RE.findall(sentence)
    tags = [morphology().parse(word)[0].tag for word in found]
    out = []
    for at, (tag, after) in enumerate(itertools.pairwise(tags)):
        if tag.POS == after.POS == "NOUN" and tag.case in _NAMING and after.case == "gent":
            out += _owner_pair(found[at], found[at + 1])
        elif located and tag.POS == "NOUN" and tag.case in _NAMING and _placed(found, at):
            out += _owner_pair(found[at], found[at + 2])
    return out


_AT = frozenset({"на", "в", "во"})  # the prepositions of a place


def _owner_pair(noun: str, owner: str) -> list[tuple[str, str]]:
    """(noun, owner) as stems, none when either has no stem or the owner is talk."""
    head, of = search_stems(noun)[:1], search_stems(owner)[:1]
    return [(head[0], of[0])] if head and of and not word_of_talk(owner) else []


def _placed(found: list[str], at: int) -> bool:
    """Whether the word at `at` of `found` has a place after it: «на» or «в» and a noun in
    the prepositional case by any reading («пруду», which pymorphy3 reads first as a
    dative)."""
    if at + 2 >= len(found) or found[at + 1].lower() not in _AT:
        return False
    readings = morphology().parse(found[at + 2])
    return readings[0].tag.POS == "NOUN" and any(r.tag.case in ("loct", "loc2") for r in readings)


# «X, которым Y …»: a noun, a comma and a relative pronoun, the words of its clause
_RELATIVE = re.compile(r"([А-Яа-яЁё-]+)\s*,\s*(котор[а-яё]+)([^,.?!;:]*)")


def _owners_related(sentence: str) -> list[tuple[str, str]]:
    """The stems of (noun, owner) where a relative clause after the noun has a subject of
    its own, in the nominative with no preposition before it: what the noun belongs to or
    serves («гибкий шланг, которым газовая плита подключена к трубе»: шланг, плита). A
    clause whose pronoun is its subject («смеситель, который ставится на борт мойки»)
    names none."""
    out = []
    for clause in _RELATIVE.finditer(sentence):
        head, pronoun, rest = clause.groups()
        if morphology().parse(pronoun.lower())[0].tag.case == "nomn":
            continue
        found = _WORD_RE.findall(rest)
        tags = [morphology().parse(word)[0].tag for word in found]
        subjects = [
            word
            for at, (word, tag) in enumerate(zip(found, tags, strict=True))
            if tag.POS == "NOUN" and tag.case == "nomn" and not (at and tags[at - 1].POS == "PREP")
        ]
        noun, owner = search_stems(head)[:1], search_stems(subjects[0])[:1] if subjects else []
        if noun and owner and not word_of_talk(subjects[0]):
            out.append((noun[0], owner[0]))
    return out


def _thing_stems(things: list[str], words: Lexicon) -> frozenset[str]:
    """The stems of `things` (`_things_asked`), but the lexicon's filler and boilerplate."""
    common = words.filler | words.generic
    return frozenset(s for word in things for s in search_stems(word)[:1] if s not in common)


def _naming_noun(word: str) -> bool:
    """Whether `word` is a noun in the nominative or accusative by its likeliest reading,
    or by a common noun's where that is a name («ульи», which pymorphy3 reads first as a
    place's name in the genitive)."""
    readings = morphology().parse(word)
    if _PROPER & readings[0].tag.grammemes:
        readings = [p for p in readings if not _PROPER & p.tag.grammemes][:1]
    return any(p.tag.POS == "NOUN" and p.tag.case in _NAMING for p in readings[:1])


_PROPER = frozenset({"Geox", "Name", "Surn", "Patr"})


def _genitive_noun(word: str) -> bool:
    """Whether `word` may be a noun in the genitive (any of its readings)."""
    return any(p.tag.POS == "NOUN" and p.tag.case == "gent" for p in morphology().parse(word))


def _names(sentence: str) -> bool:
    """Whether a sentence (its words of talk left out) names something: a word neither
    filler nor the norms' boilerplate."""
    words = lexicon()
    plain = words.filler | words.generic
    return any(stem not in plain for stem in query_parse([sentence]).terms)


@functools.lru_cache(maxsize=1024)  # the search and its result's reader both read a question
def _told_plainly(keyword: str, *, whole: bool = False) -> str:
    """A sentence (SENTENCE_WORDS words or more, or any of a question told in several:
    `whole`) without the words of talk (`_TALK`; a word the lexicon knows stays); a keyword
    phrase as it is."""
    if len(keyword.split()) < SENTENCE_WORDS and not whole:
        return keyword
    words = lexicon()
    known = words.quantities.keys() | words.synonyms.keys() | words.named

    def plain(match: re.Match[str]) -> str:
        word = match.group(0)
        if search_stems(word)[:1] and search_stems(word)[0] in known:
            return word
        if morphology().parse(word)[0].tag.POS not in _TALK:
            return word
        before = _WORD_BEFORE.search(keyword, 0, match.start())
        return word if before and _noun_after(before.group(1), word) else " "

    return _WORD_RE.sub(plain, keyword)


_WORD_BEFORE = re.compile(r"([А-Яа-яЁё]+)\s+$")


def _noun_after(adjective: str, word: str) -> bool:
    """Whether `word`, read first as talk, is a noun its neighbour `adjective` agrees with
    (case, number, the gender of a singular): «из оцинкованной стали» (not «стали», they
    became), «по социальному найму». Not after a pronoun's adjective («такие стали»)."""
    nouns = [p.tag for p in morphology().parse(word) if p.tag.POS == "NOUN"]
    return any(
        a.tag.POS in ADJECTIVES
        and "Apro" not in a.tag
        and any(
            n.case == a.tag.case
            and n.number == a.tag.number
            and (n.number == "plur" or n.gender == a.tag.gender)
            for n in nouns
        )
        for a in morphology().parse(adjective)
    )


def _is_sentence(keyword: str) -> bool:
    """Whether a keyword is a question in a person's words: it asks («?»), or tells more
    than one sentence, or runs to QUESTION_WORDS words."""
    return (
        "?" in keyword
        or len(_SENTENCE.split(keyword.strip())) > 1
        or (len(keyword.split()) >= QUESTION_WORDS)
    )


QUESTION_WORDS = 9


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[А-ЯЁA-Z«\"(])")


def _kept(phrase: list[str], filler: frozenset[str]) -> list[str]:
    return [stem for stem in phrase if stem not in filler]
