"""From what a caller sent to journal drafts: parsing, field mapping, images.

`items_parse` accepts seed 002's two shapes (a `NoteInput`, or a flat dict whose keys are
field names beside `tags`/`images`/`dedup_key`) and raises InvalidInput naming the item
and the rule. `drafts_build` maps fields, stores data URLs, loads `images[]` (URL fetches
in parallel, base64 decoded and resized on every core) and places each image's wrapper in
its target field; `on_file` hears of each file as soon as it is ready (`MediaAhead`), and
`on_ready` gets the drafts in waves while the rest are still being prepared.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from pydantic import ValidationError

from anki_bridge.images import (
    ImageProblem,
    MediaFile,
    content_name,
    data_urls_extract,
    decode_base64,
    ensure_img_tag,
    image_prepare,
    image_unreadable,
    img_stand_in,
    media_name,
    sniff_ext,
)
from anki_bridge.journal import Draft
from anki_bridge.schemas import ImageSpec, NoteInput
from core.exceptions import InvalidInput
from core.image_fetch import image_fetch

SERVICE_KEYS = ("tags", "images", "dedup_key")
FETCH_WORKERS = 8


def validation_message(where: str, exc: ValidationError) -> tuple[str, str]:
    """`(field path, "path: rule")` for the first error of a pydantic validation."""
    error = exc.errors(include_url=False)[0]
    path = ".".join([where, *(str(part) for part in error["loc"])])
    rule = "required" if error["type"] == "missing" else error["msg"]
    if error["type"] == "extra_forbidden":
        rule = "unknown key (a note takes fields, tags, images, dedup_key)"
    return path, f"{path}: {rule}"


def note_validate(data: Any, where: str) -> NoteInput:
    try:
        note = data if isinstance(data, NoteInput) else NoteInput.model_validate(data)
    except ValidationError as exc:
        path, message = validation_message(where, exc)
        raise InvalidInput(message, field=path) from exc
    if not note.fields:
        raise InvalidInput(f"{where}.fields must hold at least one field", field=f"{where}.fields")
    return note


def items_parse(items: Sequence[NoteInput | Mapping[str, Any]], *, name: str) -> list[NoteInput]:
    """Each item as a NoteInput: `{"fields": …}` objects as they are, flat dicts regrouped."""
    if not items:
        raise InvalidInput(f"{name} must hold at least one note", field=name)
    notes = []
    for i, item in enumerate(items):
        where = f"{name}[{i}]"
        if isinstance(item, NoteInput) or (isinstance(item, Mapping) and "fields" in item):
            notes.append(note_validate(item, where))
            continue
        if not isinstance(item, Mapping):
            raise InvalidInput(f"{where} must be an object", field=where)
        fields = {}
        for key, value in item.items():
            if key in SERVICE_KEYS:
                continue
            if isinstance(value, bool) or not isinstance(value, str | int | float | None):
                raise InvalidInput(
                    f"{where}.{key}: a field value must be a string", field=f"{where}.{key}"
                )
            fields[str(key)] = "" if value is None else str(value)
        grouped = {"fields": fields, **{k: item[k] for k in SERVICE_KEYS if k in item}}
        notes.append(note_validate(grouped, where))
    return notes


def tags_clean(tags: Sequence[str]) -> list[str]:
    """Anki tags hold no spaces: inner whitespace becomes `_`; empty and repeated ones go."""
    return list(dict.fromkeys("_".join(t.split()) for t in tags if t.strip()))


def tags_renamed(tags: Sequence[str]) -> list[str]:
    """A warning per tag `tags_clean` writes otherwise (a tag with a space in it)."""
    return [
        f"tag_renamed: {tag!r} is stored as {'_'.join(tag.split())!r} (an Anki tag is one word)"
        for tag in dict.fromkeys(tags)
        if tag.strip() and "_".join(tag.split()) != tag.strip()
    ]


@dataclass
class Loaded:
    file: MediaFile | None = None
    warning: str | None = None


def image_bytes(spec: ImageSpec) -> bytes:
    """The bytes of `spec`: its base64, else its URL fetched (ImageProblem when refused)."""
    if spec.image_base64:
        data = decode_base64(spec.image_base64)
        if len(data) > settings.ANKI_IMAGE_MAX_BYTES:
            raise ImageProblem(
                "image_refused",
                f"{len(data)} bytes is over the {settings.ANKI_IMAGE_MAX_BYTES}-byte cap",
            )
    else:
        data = image_fetch(
            spec.source_url or "",
            allow_private=settings.ANKI_IMAGE_ALLOW_PRIVATE,
            private_setting="ANKI_IMAGE_ALLOW_PRIVATE",
            max_bytes=settings.ANKI_IMAGE_MAX_BYTES,
            timeout=settings.ANKI_IMAGE_TIMEOUT,
        )
    if not data:
        raise ImageProblem("image_invalid", "the image is empty")
    return data


def image_finish(spec: ImageSpec, data: bytes, where: str) -> Loaded:
    """The image resized for Anki and named, or the warning that explains why there is none."""
    try:
        data, converted = image_prepare(data, max_side=spec.max_side)
    except ImageProblem as exc:
        return Loaded(warning=exc.warning(where))
    if not converted and (unreadable := image_unreadable(data, tried=True)):  # a broken picture
        return Loaded(warning=f"image_invalid: {where}: the image is {unreadable}; left out")
    filename = name_for_bytes(media_name(spec.filename), "jpg" if converted else sniff_ext(data))
    file = MediaFile(filename=content_name(filename, data), data=data)
    if converted or sniff_ext(data) == "svg":  # a drawing in vectors needs no resizing
        return Loaded(file=file)
    return Loaded(
        file=file,
        warning=f"image_not_resized: {where}: Pillow cannot read it; stored as it came",
    )


def name_for_bytes(filename: str, ext: str) -> str:
    """`filename` with the extension its bytes call for (`diagram.png` holding JPEG →
    `diagram.jpg`); kept as it is when the bytes' kind is unknown ("bin")."""
    stem, dot, current = filename.rpartition(".")
    if not dot or not stem:
        return filename if ext == "bin" else f"{filename}.{ext}"
    if ext == "bin" or current.lower() == ext or {current.lower(), ext} == {"jpeg", "jpg"}:
        return filename
    return f"{stem}.{ext}"


def target_given(spec: ImageSpec) -> bool:
    """Whether the caller named the image's field (else it is the seed's default "Back")."""
    return "target_field" in spec.model_fields_set


TargetResolver = Callable[[NoteInput, str], str | None]


def drafts_build(
    notes: Sequence[NoteInput],
    *,
    name: str,
    fields_of: Callable[[NoteInput], tuple[dict[str, str], list[str]]],
    target_of: TargetResolver,
    back_of: Callable[[NoteInput], str | None] = lambda note: None,
    skip: Callable[[NoteInput], bool] = lambda note: False,
    on_file: Callable[[MediaFile], None] | None = None,
    on_ready: Callable[[Sequence[Draft]], None] | None = None,
) -> list[Draft]:
    """Drafts for `notes`: `fields_of` maps the fields, `target_of` finds an image's field.

    An image with the default target ("Back") that the model lacks goes to `back_of`'s
    field (the one the card shows on its back), with an `image_field` warning. An image
    whose target matches no field is dropped with an `unknown_target_field`
    warning (callers that must refuse check before). `skip` notes (already delivered)
    get no images loaded. On the calling thread, which is free while the pool prepares
    the images: `on_file` hears of each file once it is ready, and `on_ready` gets the
    drafts in order, in waves: WAVE_NOTES or more complete ones while at least as many are
    still being prepared (the last wave: whatever is left), so the first notes go to Anki
    while the others are prepared, and a small call goes in one wave.
    """
    jobs: list[tuple[int, int, ImageSpec, str]] = []
    drafts: list[Draft] = []
    for i, note in enumerate(notes):
        fields, warnings = fields_of(note)
        fields, media, data_warnings = data_urls_extract(fields)
        if on_file is not None:
            for file in media:
                on_file(file)
        drafts.append(
            Draft(
                index=i,
                fields=fields,
                tags=tags_clean(note.tags),
                media=media,
                dedup_key=note.dedup_key,
                warnings=[*warnings, *data_warnings, *tags_renamed(note.tags)],
            )
        )
        if not skip(note):
            jobs += _images_placed(note, drafts[i], name=name, target_of=target_of, back_of=back_of)
    waves = _Waves(drafts, jobs, on_ready)
    for batch in _loaded_batches(jobs, name):
        for k, result in batch:
            if on_file is not None and result.file is not None:
                on_file(result.file)
            waves.loaded(k, result)
        waves.hand_over()
    waves.hand_over(last=True)
    return drafts


def _images_placed(
    note: NoteInput,
    draft: Draft,
    *,
    name: str,
    target_of: TargetResolver,
    back_of: Callable[[NoteInput], str | None],
) -> list[tuple[int, int, ImageSpec, str]]:
    """The note's images to load, each with the field it goes to (as `drafts_build` says);
    a move to the back field, or an image dropped, is a warning of `draft`."""
    i, placed = draft.index, []
    for j, spec in enumerate(note.images):
        target = target_of(note, spec.target_field)
        if target is None and not target_given(spec) and (back := back_of(note)):
            target = back
            draft.warnings.append(
                f"image_field: {name}[{i}].images[{j}]: the model has no field "
                f"{spec.target_field!r}; the image went to {back!r}, the field shown "
                "on the card's back"
            )
        if target is None:
            draft.warnings.append(
                f"unknown_target_field: {name}[{i}].images[{j}]: {spec.target_field!r} "
                f"matches no field ({', '.join(draft.fields)}); the image was not added"
            )
            continue
        placed.append((i, j, spec, target))
    return placed


WAVE_NOTES = 20  # complete drafts that make a wave (the first notes go out early)


class _Waves:
    """Images applied to their drafts in the images' order once a draft has them all; the
    complete drafts handed to `on_ready` in order, WAVE_NOTES or more at a time while as
    many are still being prepared."""

    def __init__(
        self,
        drafts: list[Draft],
        jobs: list[tuple[int, int, ImageSpec, str]],
        on_ready: Callable[[Sequence[Draft]], None] | None,
    ) -> None:
        self.drafts, self.jobs, self.on_ready = drafts, jobs, on_ready
        self.results: list[Loaded | None] = [None] * len(jobs)
        self.missing = [0] * len(drafts)
        self.of_draft: dict[int, list[int]] = {}
        for k, (i, *_) in enumerate(jobs):
            self.missing[i] += 1
            self.of_draft.setdefault(i, []).append(k)
        self.complete = 0  # drafts[:complete] have all their images
        self.handed = 0  # drafts[:handed] went to on_ready

    def loaded(self, k: int, result: Loaded) -> None:
        self.results[k] = result
        i = self.jobs[k][0]
        self.missing[i] -= 1
        if not self.missing[i]:
            for k in self.of_draft[i]:
                self._apply(k)

    def _apply(self, k: int) -> None:
        i, _, spec, target = self.jobs[k]
        result = self.results[k] or Loaded()
        draft = self.drafts[i]
        if result.warning:
            draft.warnings.append(result.warning)
        if result.file is None and spec.stand_in is not None and spec.filename:
            draft.fields[target] = img_stand_in(
                draft.fields.get(target, ""), media_name(spec.filename), spec.stand_in
            )
        if result.file is not None:
            draft.media.append(result.file)
            draft.fields[target] = ensure_img_tag(
                draft.fields.get(target, ""),
                result.file.filename,
                asked=media_name(spec.filename) if spec.filename else "",
            )

    def hand_over(self, *, last: bool = False) -> None:
        while self.complete < len(self.drafts) and not self.missing[self.complete]:
            self.complete += 1
        if self.on_ready is None or self.complete == self.handed:
            return
        ready, preparing = self.complete - self.handed, len(self.drafts) - self.complete
        # a wave goes while enough is still being prepared for Anki's work to overlap it
        if last or (ready >= WAVE_NOTES and preparing >= WAVE_NOTES):
            wave = self.drafts[self.handed : self.complete]
            self.handed = self.complete
            self.on_ready(wave)


def _loaded_batches(
    jobs: list[tuple[int, int, ImageSpec, str]], name: str
) -> Iterator[list[tuple[int, Loaded]]]:
    """Fetch URLs concurrently (I/O), then decode and resize on every core (Pillow
    releases the GIL while it decodes, resizes and encodes). Yields (job index, Loaded)
    in batches: the images done by the time the caller asks for more."""

    def fetch(job: tuple[int, int, ImageSpec, str]) -> bytes | ImageProblem | None:
        if job[2].image_base64:
            return None  # decoded by `finish`, on the pool
        try:
            return image_bytes(job[2])
        except ImageProblem as exc:
            return exc

    fetching = sum(1 for job in jobs if not job[2].image_base64)
    if fetching > 1:
        with ThreadPoolExecutor(max_workers=min(FETCH_WORKERS, fetching)) as pool:
            raw = list(pool.map(fetch, jobs))
    else:
        raw = [fetch(job) for job in jobs]

    def finish(job: tuple[tuple[int, int, ImageSpec, str], bytes | ImageProblem | None]) -> Loaded:
        (i, j, spec, _), data = job
        where = f"{name}[{i}].images[{j}]"
        if data is None:
            try:
                data = image_bytes(spec)
            except ImageProblem as exc:
                data = exc
        if isinstance(data, ImageProblem):
            return Loaded(warning=data.warning(where))
        return image_finish(spec, data, where)

    pairs = list(zip(jobs, raw, strict=True))
    workers = min(os.cpu_count() or 1, len(pairs))
    if workers <= 1:
        for k, pair in enumerate(pairs):
            yield [(k, finish(pair))]
        return
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        pending = {pool.submit(finish, pair): k for k, pair in enumerate(pairs)}
        while pending:  # this thread is free (or delivering) while the pool works
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            yield [(pending.pop(future), future.result()) for future in done]
    finally:  # the caller gave up (Anki refused a wave): the images not started are dropped
        pool.shutdown(wait=True, cancel_futures=True)
