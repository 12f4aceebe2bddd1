"""The API's one body parser: JSON, refused with a 4xx when it breaks a rule.

DRF's stock parser turns a syntax error into a 400 but lets a body nested 100,000 deep
raise `RecursionError` (a 500), and lets through what the rest of the stack cannot hold:
`1e999` (infinity, which the renderer then refuses), integers too large for a database
column, lone surrogates and NUL characters (PostgreSQL refuses both). Each is an
`InvalidInput` naming its rule, so every caller gets the one error shape.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Mapping
from itertools import accumulate
from typing import IO, Any

from django.conf import settings
from rest_framework import parsers

from core.exceptions import DomainError, InvalidInput
from core.text_rule import text_fault

# Deeper than any body the API takes; far below the interpreter's recursion limit.
MAX_JSON_DEPTH = 64
# Integers must fit a 64-bit signed column.
MIN_INTEGER, MAX_INTEGER = -(2**63), 2**63 - 1

# A string literal, or an unterminated one to the end: never a second scan from a later
# quote (quadratic on `"\\"\\"\\"…`).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class RequestTooLarge(DomainError):
    """The request body is larger than the server accepts (`DATA_UPLOAD_MAX_MEMORY_SIZE`)."""

    code = "request_too_large"
    http_status = 413

    @classmethod
    def over_limit(cls) -> RequestTooLarge:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return cls(f"request body is larger than {limit} bytes", extra={"limit": limit})


class _Refused(ValueError):
    """A rule broken while `json.loads` runs (raised from its hooks)."""

    def __init__(self, message: str, rule: str) -> None:
        super().__init__(message)
        self.rule = rule


def _refuse(message: str, rule: str, **extra: Any) -> InvalidInput:
    return InvalidInput(f"request body: {message}", extra={"rule": rule, **extra})


class JSONParser(parsers.JSONParser):
    """JSON bodies within the size, depth and value rules; anything else → `InvalidInput`."""

    def parse(
        self,
        stream: IO[Any] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        raw = _read_capped(stream)
        encoding = (parser_context or {}).get("encoding") or settings.DEFAULT_CHARSET
        return json_loads(_decode(raw, encoding))


def json_loads(text: str) -> Any:
    """`text` parsed as strict JSON, or `InvalidInput` naming the rule it breaks."""
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise _refuse(
            f"JSON nested deeper than {MAX_JSON_DEPTH} levels", "json_depth", limit=MAX_JSON_DEPTH
        )
    try:
        data = json.loads(
            text, parse_constant=_constant, parse_float=_finite_float, parse_int=_bounded_int
        )
    except _Refused as exc:
        raise _refuse(str(exc), exc.rule) from None
    except (ValueError, RecursionError) as exc:
        raise _refuse(f"not valid JSON ({exc})", "json_syntax") from None
    if "\\u" in text:  # only an escape can smuggle a lone surrogate or a NUL past decoding
        _check_strings(data)
    return data


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in `text`, without recursion."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return 0  # cannot be deeper than the brackets it has: the common case, two scans
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _read_capped(stream: IO[Any] | None) -> bytes:
    """The body, or `RequestTooLarge` past the limit (when no Content-Length told Django)."""
    if stream is None:
        return b""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    raw: bytes = stream.read() if limit is None else stream.read(limit + 1)
    if limit is not None and len(raw) > limit:
        raise RequestTooLarge.over_limit()
    return raw


def _decode(raw: bytes, encoding: str) -> str:
    """The body as text. JSON is UTF-8 (RFC 8259; UTF-16/32 from older clients); other
    codecs are refused: some would decode escapes (unicode_escape) or bytes (bz2_codec)
    behind the rules' back."""
    try:
        codec = codecs.lookup(encoding).name
    except LookupError:
        codec = ""
    if not codec.startswith(("utf-8", "utf-16", "utf-32")):
        raise _refuse(f"charset {encoding[:40]} is not UTF-8", "encoding")
    try:
        return raw.decode(codec)
    except UnicodeDecodeError:
        raise _refuse(f"not valid {codec} text", "encoding") from None


def _constant(name: str) -> float:
    raise _Refused(f"{name} is not a JSON number", "finite_number")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _Refused(f"number {literal[:20]} is out of range", "finite_number")
    return value


def _bounded_int(literal: str) -> int:
    # The length test first: int() of a 5,000-digit literal is refused by Python anyway,
    # and a 4,000-digit one costs quadratic time to convert.
    if len(literal) > 20 or not MIN_INTEGER <= (value := int(literal)) <= MAX_INTEGER:
        raise _Refused(f"integer {literal[:20]}… does not fit in 64 bits", "integer_range")
    return value


def _check_strings(data: Any) -> None:
    """Refuse lone surrogates and NUL characters in any key or string value, naming where."""
    fault = text_fault(data)
    if fault is not None:
        message = f"{fault.field}: {fault.message}" if fault.where else fault.message
        raise _refuse(message, fault.rule, field=fault.field)
