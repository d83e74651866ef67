"""JSON schema -> GBNF, for servers that take a grammar (llama.cpp's `grammar` field).

A grammar is how a local server enforces a format that `response_format` cannot describe, such
as the delimited protocol (free text, a `---` line, then JSON). The converter covers the subset
our schemas use: objects (properties in order, all written), strings (enum, const, maxLength),
numbers, integers, booleans, null, arrays (items, min/maxItems), anyOf/oneOf, $ref into $defs.
Keys are written in schema order, which also keeps answers short and predictable.
"""

from __future__ import annotations

import json
import re
from typing import Any

_CHAR = r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
_BASE = {
    # One space at most: every newline or indent a model may write is a token (0.07 s here).
    "ws": '" "?',
    "char": _CHAR,
    "string": '"\\"" char{0,500} "\\""',
    "number": '"-"? [0-9]{1,12} ("." [0-9]{1,6})?',
    "integer": '"-"? [0-9]{1,12}',
    "boolean": '"true" | "false"',
    "null": '"null"',
}


def _literal(value: Any) -> str:
    """A GBNF literal that matches the JSON text of `value`."""
    text = json.dumps(value, ensure_ascii=False)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Converter:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = schema.get("$defs", {})
        self.rules: dict[str, str] = {}

    def rule(self, name: str, body: str) -> str:
        name = re.sub(r"[^a-zA-Z0-9-]+", "-", name).strip("-") or "r"
        candidate, n = name, 1
        while candidate in self.rules and self.rules[candidate] != body:
            n += 1
            candidate = f"{name}{n}"
        self.rules[candidate] = body
        return candidate

    def visit(self, schema: dict[str, Any], name: str) -> str:
        if "$ref" in schema:
            ref = schema["$ref"].rsplit("/", 1)[-1]
            return self.visit(self.defs[ref], ref)
        if "const" in schema:
            return _literal(schema["const"])
        if "enum" in schema:
            return "(" + " | ".join(_literal(v) for v in schema["enum"]) + ")"
        options = schema.get("anyOf") or schema.get("oneOf")
        if options:
            parts = [self.visit(o, f"{name}-{i}") for i, o in enumerate(options)]
            return self.rule(name, " | ".join(parts))
        kind = schema.get("type")
        if isinstance(kind, list):
            return self.visit({"anyOf": [{**schema, "type": k} for k in kind]}, name)
        if kind == "object":
            return self.rule(name, self._object(schema, name))
        if kind == "array":
            return self.rule(name, self._array(schema, name))
        if kind == "string":
            limit = schema.get("maxLength")
            if limit is None:
                return "string"
            low = schema.get("minLength", 0)
            return self.rule(f"string-{low}-{limit}", f'"\\"" char{{{low},{limit}}} "\\""')
        if kind in ("number", "integer", "boolean", "null"):
            return str(kind)
        return self.rule("any", "string | number | boolean | null")

    def _object(self, schema: dict[str, Any], name: str) -> str:
        properties = schema.get("properties", {})
        if not properties:
            return '"{" ws "}"'
        parts = [
            f'{_literal(key)} ws ":" ws {self.visit(value, f"{name}-{key}")}'
            for key, value in properties.items()
        ]
        return '"{" ws ' + ' ws "," ws '.join(parts) + ' ws "}"'

    def _array(self, schema: dict[str, Any], name: str) -> str:
        item = self.visit(schema.get("items", {}), f"{name}-item")
        low, high = schema.get("minItems", 0), schema.get("maxItems")
        if high == 0:
            return '"[" ws "]"'
        more = f"{{{max(low - 1, 0)},{'' if high is None else high - 1}}}"
        body = f'"[" ws {item} (ws "," ws {item}){more} ws "]"'
        return body if low > 0 else f'"[" ws "]" | {body}'

    def render(self, root: str) -> str:
        lines = [f"root ::= {root}"]
        lines += [f"{name} ::= {body}" for name, body in self.rules.items()]
        lines += [f"{name} ::= {body}" for name, body in _BASE.items()]
        return "\n".join(lines) + "\n"


def json_grammar(schema: dict[str, Any]) -> str:
    """A grammar for one JSON value under `schema`."""
    converter = _Converter(schema)
    return converter.render(converter.visit(schema, "value"))


def text_then_json_grammar(schema: dict[str, Any], *, delimiter: str, max_chars: int) -> str:
    """One or two lines of free text (no braces, so no JSON hides in it; no dash at a line's
    start nor after another dash, so no `---`), a line with only `delimiter`, then one JSON
    value under `schema`."""
    converter = _Converter(schema)
    value = converter.visit(schema, "value")
    plain = "[^\\n\\x2D{}]"
    converter.rules["text"] = f'{plain} ({plain} | "-" {plain}){{0,{max_chars}}}'
    converter.rules["prose"] = 'text ("\\n" "\\n"? text){0,1}'
    return converter.render(f'prose "\\n{delimiter}\\n" {value}')


def lines_grammar(lines: list[tuple[dict[str, Any], int, int]]) -> str:
    """One JSON value per line: for each (schema, fewest, most), that many lines, in order."""
    converter = _Converter({})
    parts = []
    for index, (schema, low, high) in enumerate(lines):
        if high == 0:
            continue
        item = f'{converter.visit(schema, f"line{index}")} "\\n"'
        parts.append(item if (low, high) == (1, 1) else f"({item}){{{low},{high}}}")
    return converter.render(" ".join(parts))
