#!/usr/bin/env python3
"""Writes schemathesis's configuration for a run against the seeded system.

Usage: schemathesis-config.py DOCUMENT APP_ID API_KEY [PATH_PREFIX PARAMETER VALUE]... > schemathesis.toml

The servers' variables name the run's app and key. Every parameter the description gives
examples for (path and query parameters, and the top-level properties of a JSON body) is bound
to a dictionary of those examples, drawn with the probability below: the examples name what the
tests seed, so the fuzzing phase reaches the success paths as often as the examples phase does,
and still sends generated values the rest of the time. Like libFuzzer's dictionaries, they steer
generation; they never replace it. Each trailing triple adds a value the seeding made whose id the
server chose (so no example can name it): PARAMETER (`path.id`) of the operations whose path
starts with PATH_PREFIX draws VALUE too — except removals, which would take it from the others;
a PATH_PREFIX naming a method (`DELETE /geo/points/`) binds that method's operations only.
"""

import json
import sys

PROBABILITY = 0.75


def resolve(document, node):
    """`node` with its `$ref` followed, if it has one."""
    while isinstance(node, dict) and "$ref" in node:
        target = document
        for key in node["$ref"].lstrip("#/").split("/"):
            target = target[key]
        node = target
    return node


def examples(schema):
    """The examples a schema gives, if any."""
    if not isinstance(schema, dict):
        return []
    found = list(schema.get("examples") or [])
    if "example" in schema:
        found.append(schema["example"])
    return [value for value in found if isinstance(value, (str, int, float)) and not isinstance(value, bool)]


def bindings(document, operation):
    """(location.name, examples) for each parameter of `operation` with examples."""
    for parameter in operation.get("parameters", []):
        parameter = resolve(document, parameter)
        values = examples(resolve(document, parameter.get("schema"))) + examples(parameter)
        if values and parameter.get("in") in ("path", "query"):
            yield f"{parameter['in']}.{parameter['name']}", values
    body = resolve(document, operation.get("requestBody"))
    schema = resolve(document, ((body or {}).get("content", {}).get("application/json") or {}).get("schema"))
    for name, property_schema in ((schema or {}).get("properties") or {}).items():
        values = examples(resolve(document, property_schema))
        if values and name.replace("_", "").replace("-", "").isalnum():
            yield f"body.{name}", values


def quoted(text):
    return json.dumps(text)


def configuration(document, app_id, api_key, seeded=()):
    lines = ["[servers.variables]", f"appId = {quoted(app_id)}", f"apiKey = {quoted(api_key)}", ""]
    operations, dictionaries = [], []
    for path, item in sorted(document.get("paths", {}).items()):
        for method, operation in sorted(item.items()):
            if method not in ("get", "put", "post", "patch", "delete") or not isinstance(operation, dict):
                continue
            bound = []
            found = dict(bindings(document, operation))
            label = method.upper() + " " + path
            for prefix, key, value in seeded:
                if label.startswith(prefix) if " " in prefix else path.startswith(prefix) and method != "delete":
                    found[key] = found.get(key, []) + [value]
            for key, values in found.items():
                name = f"examples{len(dictionaries)}"
                dictionaries.append((name, values))
                bound.append(f"{quoted(key)} = {{ dictionary = {quoted(name)}, probability = {PROBABILITY} }}")
            if bound:
                operations += [
                    "[[operations]]",
                    f"include-name = {quoted(method.upper() + ' ' + path)}",
                    f"parameters = {{ {', '.join(bound)} }}",
                    "",
                ]
    for name, values in dictionaries:
        lines += [f"[dictionaries.{name}]", f"values = {json.dumps(values)}", ""]
    return "\n".join(lines + operations)


if __name__ == "__main__":
    with open(sys.argv[1]) as file:
        extra = sys.argv[4:]
        seeded = [tuple(extra[index : index + 3]) for index in range(0, len(extra) - 2, 3)]
        print(configuration(json.load(file), sys.argv[2], sys.argv[3], seeded))
