"""From what a caller sent to journal drafts: parsing, field mapping, images.

`items_parse` accepts seed 002's two shapes (a `NoteInput`, or a flat dict whose keys are
field names beside `tags`/`images`/`dedup_key`) and raises InvalidInput naming the item
and the rule. `drafts_build` maps fields, stores data URLs, loads `images[]` (URL fetches
in parallel, base64 decoded and resized on every core) and places each image's wrapper in
its target field; `on_file` hears of each file as soon as it is ready (`MediaAhead`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from pydantic import ValidationError

from anki_bridge.images import (
    ImageProblem,
    MediaFile,
    data_urls_extract,
    decode_base64,
    ensure_img_tag,
    image_prepare,
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
    filename = name_for_bytes(media_name(spec.filename), "jpg" if converted else sniff_ext(data))
    file = MediaFile(filename=filename, data=data)
    if converted:
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
) -> list[Draft]:
    """Drafts for `notes`: `fields_of` maps the fields, `target_of` finds an image's field.

    An image with the default target ("Back") that the model lacks goes to `back_of`'s
    field (the one the card shows on its back), with an `image_field` warning. An image
    whose target matches no field is dropped with an `unknown_target_field`
    warning (callers that must refuse check before). `skip` notes (already delivered)
    get no images loaded. `on_file` is called with each file once it is ready, on the
    calling thread (which is free while the pool prepares the others).
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
                warnings=[*warnings, *data_warnings],
            )
        )
        if skip(note):
            continue
        for j, spec in enumerate(note.images):
            target = target_of(note, spec.target_field)
            if target is None and not target_given(spec) and (back := back_of(note)):
                target = back
                drafts[i].warnings.append(
                    f"image_field: {name}[{i}].images[{j}]: the model has no field "
                    f"{spec.target_field!r}; the image went to {back!r}, the field shown "
                    "on the card's back"
                )
            if target is None:
                drafts[i].warnings.append(
                    f"unknown_target_field: {name}[{i}].images[{j}]: {spec.target_field!r} "
                    f"matches no field ({', '.join(fields)}); the image was not added"
                )
                continue
            jobs.append((i, j, spec, target))
    loaded = _load_all(jobs, name, on_file)
    for (i, _, spec, target), result in zip(jobs, loaded, strict=True):
        if result.warning:
            drafts[i].warnings.append(result.warning)
        if result.file is not None:
            drafts[i].media.append(result.file)
            drafts[i].fields[target] = ensure_img_tag(
                drafts[i].fields.get(target, ""),
                result.file.filename,
                asked=media_name(spec.filename) if spec.filename else "",
            )
    return drafts


def _load_all(
    jobs: list[tuple[int, int, ImageSpec, str]],
    name: str,
    on_file: Callable[[MediaFile], None] | None = None,
) -> list[Loaded]:
    """Fetch URLs concurrently (I/O), then decode and resize on every core (Pillow
    releases the GIL while it decodes, resizes and encodes); each file goes to `on_file`,
    on this thread, as soon as it is ready."""

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
    loaded: list[Loaded] = []
    if workers <= 1:
        for pair in pairs:
            loaded.append(finish(pair))
            if on_file is not None and loaded[-1].file is not None:
                on_file(loaded[-1].file)
        return loaded
    loaded = [Loaded()] * len(pairs)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(finish, pair): k for k, pair in enumerate(pairs)}
        for future in as_completed(futures):  # this thread is free while the pool works
            loaded[futures[future]] = result = future.result()
            if on_file is not None and result.file is not None:
                on_file(result.file)
    return loaded
