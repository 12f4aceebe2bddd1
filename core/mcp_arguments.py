"""Tool arguments as models send them: strict, text-safe, integers accepted as text ids.

`ToolArguments` is the SDK's `FuncMetadata` (public API of mcp 2.3) with three changes:
the argument model forbids unknown arguments; an argument that accepts text keeps its text
(the SDK would json-decode `"null"` into None); an integer sent where only text is
accepted becomes its decimal text (models send `problem_id: 27340` for a string id).
Validation itself happens inside the tool call (see `core.mcp_server.guard`), so an
argument error reads as one sentence naming each field and its rule.

`schema_for_strict_clients` writes the input schema that strict function-calling clients
accept: no `$ref`/`$defs`, no `anyOf`/`oneOf`/`allOf`, no `nullable`, at any depth.
`without_titles` drops pydantic's generated titles, which repeat the property names and
cost a model's context on every `tools/list`; `compact_output_schema` also writes an
output schema's optional values as type lists, names the keys of nested objects
instead of a schema for each, and drops what only the server's code reads.
"""

from __future__ import annotations

import functools
import types
from typing import Annotated, Any, Literal, Self, Union, get_args, get_origin

from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp_types import CallToolResult
from pydantic import BaseModel, TypeAdapter, ValidationError, WithJsonSchema
from pydantic_core import InitErrorDetails, PydanticCustomError

from core.text_rule import text_fault

RAW_ARGUMENTS = "_arguments"  # the keyword under which the guard receives the raw arguments


def branches(annotation: Any) -> list[Any]:
    """The alternatives of an annotation: `Annotated` unwrapped, unions flattened."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return branches(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return [branch for arg in get_args(annotation) for branch in branches(arg)]
    return [annotation]


def accepts_text(annotation: Any) -> bool:
    """Whether a string is a valid value as it is: `str`, `str | None`, `Literal["a", ...]`."""
    return any(
        branch is str
        or (get_origin(branch) is Literal and any(isinstance(a, str) for a in get_args(branch)))
        for branch in branches(annotation)
    )


def accepts_integer(annotation: Any) -> bool:
    """Whether an integer is a valid value as it is (int, float, Any, an integer Literal)."""
    return any(
        branch in (int, float, Any, object)
        or (
            get_origin(branch) is Literal
            and any(isinstance(a, int) and not isinstance(a, bool) for a in get_args(branch))
        )
        for branch in branches(annotation)
    )


def text_ids(value: Any, annotation: Any) -> Any:
    """`value` with every integer (not bool, not float) that stands where only text is
    accepted turned into its decimal text, through lists and nested models."""
    if isinstance(value, int) and not isinstance(value, bool):
        textual = accepts_text(annotation) and not accepts_integer(annotation)
        return str(value) if textual else value
    if isinstance(value, list):
        items = [get_args(b)[0] for b in branches(annotation) if get_origin(b) is list]
        return [text_ids(item, items[0]) for item in value] if len(items) == 1 else value
    if isinstance(value, dict):
        models = [b for b in branches(annotation) if _is_model(b)]
        return model_text_ids(value, models[0]) if len(models) == 1 else value
    return value


def holds_integer(value: Any) -> bool:
    """Whether an integer (not a bool) stands anywhere in `value` (JSON: lists, objects)."""
    if isinstance(value, int):
        return not isinstance(value, bool)
    if isinstance(value, list):
        return any(holds_integer(item) for item in value)
    if isinstance(value, dict):
        return any(holds_integer(item) for item in value.values())
    return False


def model_text_ids(data: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """`text_ids` over the fields of `model` (by name or alias) present in `data`."""
    annotations: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        annotations[name] = info.annotation
        if info.alias:
            annotations[info.alias] = info.annotation
    return {
        key: text_ids(value, annotations[key]) if key in annotations else value
        for key, value in data.items()
    }


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


class ToolArguments(FuncMetadata):
    """The SDK's argument handling, made strict, text-safe and lenient on text ids.

    The SDK calls `validate_arguments` before the tool runs and reports a failure in its
    own words; here it hands the raw arguments on (under `RAW_ARGUMENTS`) and the guard
    calls `parse`, which validates, so the error is the adapter's to word.
    """

    # Set for a tool whose output schema another tool declares (`shape_declared_elsewhere`).
    checked_against: Annotated[Any, WithJsonSchema(None)] = None

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        """Text arguments keep their text; lists and objects sent as JSON text are still
        decoded; integers become text where only text is accepted."""
        textual = self.textual_keys
        parsed = super().pre_parse_json({k: v for k, v in data.items() if k not in textual})
        merged = {key: data[key] if key in textual else parsed[key] for key in data}
        return model_text_ids(merged, self.arg_model) if holds_integer(merged) else merged

    @functools.cached_property
    def textual_keys(self) -> frozenset[str]:
        """The argument names (and aliases) that accept text as it is."""
        return frozenset(
            key
            for name, info in self.arg_model.model_fields.items()
            if accepts_text(info.annotation)
            for key in (name, info.alias)
            if key
        )

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        return {RAW_ARGUMENTS: arguments_to_validate}

    @classmethod
    def shape_declared_elsewhere(cls, arg_model: type[Any], output_model: type[Any]) -> Self:
        """Arguments of a tool whose output schema another tool declares (`ToolSpec.shape_of`):
        none advertised here, and the result still checked against `output_model`."""
        arguments = cls(arg_model=arg_model, output_model=output_model)
        arguments.output_schema = None
        arguments.checked_against = TypeAdapter(output_model)
        return arguments

    def convert_result(self, result: Any) -> Any:
        converted = super().convert_result(result)
        shape = self.checked_against
        if shape is not None and isinstance(converted, CallToolResult) and not converted.is_error:
            shape.validate_python(converted.structured_content)
        return converted

    def parse(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments of the tool function. Raises pydantic's ValidationError,
        first for text no database holds (`core.text_rule`), naming the argument."""
        fault = text_fault(arguments)
        if fault is not None:
            error = PydanticCustomError(fault.rule, fault.message)
            line = InitErrorDetails(type=error, loc=fault.loc, input="")
            raise ValidationError.from_exception_data("arguments", [line])
        return super().validate_arguments(arguments)


def describe_validation_error(tool: str, exc: ValidationError) -> str:
    """`Invalid arguments for greet: name: required argument missing; x: unknown argument`."""
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "missing":
            rule = "required argument missing"
        elif error["type"] == "extra_forbidden":
            rule = "unknown argument (not accepted by this tool)"
        else:
            rule = error["msg"]
        problems.append(f"{where}: {rule}")
    return f"Invalid arguments for {tool}: " + "; ".join(problems)


# --- The input schema strict clients accept --------------------------------------------

UNION_KEYS = ("anyOf", "oneOf")
NULL = {"type": "null"}


def schema_for_strict_clients(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with `$defs` inlined and unions and nullables flattened, at every depth.

    An optional argument `X | None` becomes plain X (omitting it means the same as null;
    validation still accepts an explicit null) and loses `default: null`. A union of
    objects becomes one object that accepts what each branch accepts.
    """
    definitions = schema.get("$defs", {})
    return _flatten_schema({k: v for k, v in schema.items() if k != "$defs"}, definitions, ())


def _flatten(node: Any, definitions: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_flatten(item, definitions, seen) for item in node]
    if isinstance(node, dict):
        return _flatten_schema(node, definitions, seen)
    return node


def _flatten_schema(
    node: dict[str, Any], definitions: dict[str, Any], seen: tuple[str, ...]
) -> dict[str, Any]:
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name in seen:
            raise ValueError(f"recursive schema {name!r} cannot be inlined")
        # The model's docstring is for the code; the property's own description stays.
        definition = {k: v for k, v in definitions[name].items() if k != "description"}
        target = _flatten_schema(definition, definitions, (*seen, name))
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        return {**target, **_flatten_schema(siblings, definitions, seen)}
    node = {key: _flatten(value, definitions, seen) for key, value in node.items()}
    node.pop("nullable", None)
    for key in ("allOf", *UNION_KEYS):
        if key in node:
            node = {**_merge(node.pop(key), all_of=key == "allOf"), **node}
    if node.get("default", 0) is None:
        del node["default"]
    return node


def _merge(parts: list[dict[str, Any]], *, all_of: bool) -> dict[str, Any]:
    """One schema for `parts` (already flattened): their conjunction for allOf, else a
    schema that accepts what any non-null branch accepts."""
    parts = [part for part in parts if part != NULL]
    if len(parts) == 1:
        return parts[0]
    if all_of:
        merged: dict[str, Any] = {}
        for part in parts:
            merged.update(part)
        return merged
    kinds = {part.get("type") for part in parts}
    if kinds == {"object"}:
        return _object_union(parts)
    if len(kinds) == 1 and None not in kinds and all("enum" in p or "const" in p for p in parts):
        values = [v for p in parts for v in (p.get("enum") or [p.get("const")])]
        return {"type": kinds.pop(), "enum": values}
    simple = sorted(kind for kind in kinds if isinstance(kind, str))
    return {"type": simple} if len(simple) == len(parts) else {}


def _object_union(parts: list[dict[str, Any]]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for part in parts:
        for name, prop in part.get("properties", {}).items():
            properties.setdefault(name, prop)
    required = set.intersection(*(set(part.get("required", [])) for part in parts))
    closed = all(part.get("additionalProperties") is False for part in parts)
    merged: dict[str, Any] = {"type": "object", "additionalProperties": not closed}
    if properties:
        merged["properties"] = properties
    if required:
        merged["required"] = sorted(required)
    return merged


DEFS = "#/$defs/"
REF_KEYS = ("$ref", "$defs")

# --- Compact schemas ---------------------------------------------------------------------

# The keywords whose value is a mapping of names to schemas, and those holding schemas.
SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains")


def without_titles(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without the `title` keyword at any depth (a property *named* title stays),
    nor `additionalProperties: true`, which is what an absent one means."""
    node = {
        key: value
        for key, value in schema.items()
        if key != "title" and not (key == "additionalProperties" and value is True)
    }
    for key in SCHEMA_MAPS:
        if isinstance(node.get(key), dict):
            node[key] = {name: without_titles(sub) for name, sub in node[key].items()}
    for key in SCHEMA_LISTS:
        if isinstance(node.get(key), list):
            node[key] = [without_titles(sub) for sub in node[key]]
    for key in SCHEMA_VALUES:
        if isinstance(node.get(key), dict):
            node[key] = without_titles(node[key])
    return node


def compact_output_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An output schema as short as it can be and still validate the same results.

    Titles, defaults and `required` go (a result carries its values; the schema says what
    each is, for clients and models, and the server's own models check it); the models' docstrings
    (the root's and each definition's description) go, field descriptions stay; an
    optional value `anyOf: [X, {type: null}]` becomes X with `type: [X's type, "null"]`.
    """
    node = _compact_output(without_titles(schema))
    node.pop("description", None)
    for definition in node.get("$defs", {}).values():
        definition.pop("description", None)
    return _nested_objects_named(_single_uses_inlined(node), depth=0)


def _nested_objects_named(node: dict[str, Any], *, depth: int) -> dict[str, Any]:
    """`node` with each object below the result's own values (a hit of a list of hits, a
    source of an answer) written as its keys in a sentence, not a schema per key.

    The structured result holds every value and the tool's text shows them; a schema of
    each nested key costs about eight tokens where its name costs one, on every
    `tools/list` (issue 54, item 6). It still validates the same results: an object.
    """
    properties = node.get("properties")
    if depth >= 2 and isinstance(properties, dict) and properties:
        rest = {
            key: value
            for key, value in node.items()
            if key not in ("properties", "additionalProperties")
        }
        keys = f"Keys: {', '.join(properties)}."
        rest["description"] = f"{rest['description']} {keys}" if "description" in rest else keys
        return rest
    result = dict(node)
    if isinstance(properties, dict):
        result["properties"] = {
            name: _nested_objects_named(sub, depth=depth + 1) if isinstance(sub, dict) else sub
            for name, sub in properties.items()
        }
    if isinstance(node.get("items"), dict):
        result["items"] = _nested_objects_named(node["items"], depth=depth + 1)
    for key in UNION_KEYS:  # a note or null: each branch at the node's own depth
        if isinstance(node.get(key), list):
            result[key] = [
                _nested_objects_named(sub, depth=depth) if isinstance(sub, dict) else sub
                for sub in node[key]
            ]
    return result


def _single_uses_inlined(root: dict[str, Any]) -> dict[str, Any]:
    """`root` with each definition referred to once written in place of its `$ref` (the
    reference and the entry cost more tokens than they save); shared ones stay."""
    definitions: dict[str, Any] = root.get("$defs", {})
    uses: dict[str, int] = {}

    def count(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(DEFS):
                uses[ref[len(DEFS) :]] = uses.get(ref[len(DEFS) :], 0) + 1
            for value in node.values():
                count(value)
        elif isinstance(node, list):
            for value in node:
                count(value)

    count(root)
    once = {name for name in definitions if uses.get(name) == 1}

    def inline(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(value, seen) for value in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        name = ref[len(DEFS) :] if isinstance(ref, str) and ref.startswith(DEFS) else None
        if name in once and name not in seen:
            siblings = {
                key: inline(value, seen) for key, value in node.items() if key not in REF_KEYS
            }
            return {**inline(definitions[name], (*seen, name)), **siblings}
        return {key: inline(value, seen) for key, value in node.items() if key != "$defs"}

    result = inline(root, ())
    kept = {
        name: inline(definition, (name,))
        for name, definition in definitions.items()
        if name not in once
    }
    if kept:
        result["$defs"] = kept
    return result


def _compact_output(node: dict[str, Any]) -> dict[str, Any]:
    node = {key: value for key, value in node.items() if key not in ("default", "required")}
    for key in SCHEMA_MAPS:
        if isinstance(node.get(key), dict):
            node[key] = {name: _compact_output(sub) for name, sub in node[key].items()}
    for key in SCHEMA_LISTS:
        if isinstance(node.get(key), list):
            node[key] = [_compact_output(sub) for sub in node[key]]
    for key in SCHEMA_VALUES:
        if isinstance(node.get(key), dict):
            node[key] = _compact_output(node[key])
    branches = node.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and NULL in branches:
        (other,) = [branch for branch in branches if branch != NULL]
        if isinstance(other.get("type"), str):
            rest = {key: value for key, value in node.items() if key != "anyOf"}
            return {**other, **rest, "type": [other["type"], "null"]}
    return node
