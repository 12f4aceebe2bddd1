"""The СДАМ ГИА sites: subject codes per exam, Russian names and aliases.

Every tool takes `subject` and `exam`; `site_resolve()` turns whatever the caller wrote
(`math`, `информатика`, `профмат`, `база`) into one valid (subject, exam) pair or raises
InvalidInput listing the valid codes.
"""

from __future__ import annotations

from dataclasses import dataclass

from problems.exceptions import InvalidSubject

EXAMS = ("ege", "oge")

EGE_SUBJECTS: dict[str, str] = {
    "math": "Математика профильная",
    "mathb": "Математика базовая",
    "inf": "Информатика",
    "rus": "Русский язык",
    "en": "Английский язык",
    "de": "Немецкий язык",
    "fr": "Французский язык",
    "sp": "Испанский язык",
    "phys": "Физика",
    "chem": "Химия",
    "bio": "Биология",
    "geo": "География",
    "soc": "Обществознание",
    "lit": "Литература",
    "hist": "История",
}

OGE_SUBJECTS: dict[str, str] = {
    "math": "Математика",
    "inf": "Информатика",
    "rus": "Русский язык",
    "ruso": "Русский язык, устное собеседование",
    "en": "Английский язык",
    "de": "Немецкий язык",
    "fr": "Французский язык",
    "sp": "Испанский язык",
    "phys": "Физика",
    "chem": "Химия",
    "bio": "Биология",
    "geo": "География",
    "soc": "Обществознание",
    "lit": "Литература",
    "hist": "История",
}

SUBJECTS: dict[str, dict[str, str]] = {"ege": EGE_SUBJECTS, "oge": OGE_SUBJECTS}

# Alias → subject code. Keys are matched after lower-casing, ё→е and space folding.
ALIASES: dict[str, str] = {
    "математика": "math",
    "профильная математика": "math",
    "математика профильная": "math",
    "профиль": "math",
    "профмат": "math",
    "профильная": "math",
    "базовая математика": "mathb",
    "математика базовая": "mathb",
    "база": "mathb",
    "базовая": "mathb",
    "базмат": "mathb",
    "информатика": "inf",
    "информатика и икт": "inf",
    "икт": "inf",
    "русский": "rus",
    "русский язык": "rus",
    "русский язык устное собеседование": "ruso",
    "устное собеседование": "ruso",
    "собеседование": "ruso",
    "английский": "en",
    "английский язык": "en",
    "english": "en",
    "eng": "en",
    "немецкий": "de",
    "немецкий язык": "de",
    "german": "de",
    "французский": "fr",
    "французский язык": "fr",
    "french": "fr",
    "испанский": "sp",
    "испанский язык": "sp",
    "spanish": "sp",
    "es": "sp",
    "физика": "phys",
    "physics": "phys",
    "химия": "chem",
    "chemistry": "chem",
    "биология": "bio",
    "biology": "bio",
    "география": "geo",
    "geography": "geo",
    "обществознание": "soc",
    "общество": "soc",
    "обществ": "soc",
    "литература": "lit",
    "literature": "lit",
    "история": "hist",
    "history": "hist",
    "mathematics": "math",
    "informatics": "inf",
    "russian": "rus",
}

EXAM_ALIASES: dict[str, str] = {"егэ": "ege", "огэ": "oge", "ege": "ege", "oge": "oge"}


@dataclass(frozen=True)
class Site:
    """One СДАМ ГИА site: `math` on `ege` is https://math-ege.sdamgia.ru."""

    subject: str
    exam: str

    @property
    def name(self) -> str:
        return SUBJECTS[self.exam][self.subject]

    @property
    def label(self) -> str:
        return f"{self.subject}-{self.exam}"


def _fold(value: str) -> str:
    return " ".join(value.lower().replace("ё", "е").replace(",", " ").replace("-", " ").split())


def exam_resolve(exam: str) -> str:
    """`ege`/`oge` (also `ЕГЭ`/`ОГЭ`) → the code; InvalidSubject naming `exam` otherwise."""
    code = EXAM_ALIASES.get(_fold(exam))
    if code is None:
        raise InvalidSubject(f"exam must be 'ege' or 'oge', got {exam!r}", field="exam")
    return code


def _subject_code(subject: str) -> str | None:
    """The code a subject's code, Russian name or alias names (either exam), or None."""
    folded = _fold(subject)
    return folded if folded in SUBJECTS["ege"] or folded in SUBJECTS["oge"] else ALIASES.get(folded)


def subject_resolve(subject: str) -> str:
    """A subject's code from its code, Russian name or alias, on either exam; InvalidSubject
    naming `subject` and the valid codes otherwise."""
    code = _subject_code(subject)
    if code is None:
        valid = ", ".join(sorted({*SUBJECTS["ege"], *SUBJECTS["oge"]}))
        raise InvalidSubject(
            f"subject {_shown(subject)} is not a СДАМ ГИА subject; valid codes: {valid}",
            field="subject",
        )
    return code


def site_resolve(*, subject: str, exam: str = "ege") -> Site:
    """The site for a subject code, Russian name or alias on an exam.

    Raises InvalidSubject naming the field and listing the valid codes for that exam.
    """
    exam_code = exam_resolve(exam)
    code = _subject_code(subject)
    valid = ", ".join(SUBJECTS[exam_code])
    if code is None:
        raise InvalidSubject(
            f"subject {_shown(subject)} is not a СДАМ ГИА subject; valid codes for {exam_code}: "
            f"{valid}",
            field="subject",
        )
    if code not in SUBJECTS[exam_code]:
        other = "oge" if exam_code == "ege" else "ege"
        raise InvalidSubject(
            f"subject {code!r} exists only for {other}, not for {exam_code}; "
            f"valid codes for {exam_code}: {valid}",
            field="subject",
        )
    return Site(subject=code, exam=exam_code)


def sites_all() -> list[Site]:
    """All 30 sites: 15 ЕГЭ and 15 ОГЭ."""
    return [Site(subject=code, exam=exam) for exam in EXAMS for code in SUBJECTS[exam]]


def _shown(value: str, limit: int = 60) -> str:
    """`value` quoted for an error message, cut when long (a message never echoes a page)."""
    return repr(value if len(value) <= limit else value[:limit] + "…")
