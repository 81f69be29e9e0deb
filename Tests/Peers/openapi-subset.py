"""Prints the part of an OpenAPI document that a generated client's operations use.

    python3 Tests/Peers/openapi-subset.py DOCUMENT "POST /users/register" "GET /data/{table}" …

The paths and methods named, the components their `$ref`s reach (transitively), and the
document's `openapi`, `info`, `servers` and security schemes, as sorted, indented JSON: the same
operations in two documents give the same text, so a test can tell whether a client generated
from one still matches the other.
"""
import json
import sys


def references(value, found):
    """Every `#/components/schemas/NAME` under `value`."""
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            found.add(ref.rsplit("/", 1)[1])
        for item in value.values():
            references(item, found)
    elif isinstance(value, list):
        for item in value:
            references(item, found)


def subset(document, operations):
    paths = {}
    for operation in operations:
        method, path = operation.split(" ", 1)
        try:
            paths.setdefault(path, {})[method.lower()] = document["paths"][path][method.lower()]
        except KeyError:
            sys.exit(f"openapi-subset: the document has no {operation}")
    schemas = document.get("components", {}).get("schemas", {})
    needed, queue = set(), set()
    references(paths, queue)
    while queue:
        name = queue.pop()
        if name in needed:
            continue
        needed.add(name)
        references(schemas.get(name, {}), queue)
    components = {"schemas": {name: schemas[name] for name in sorted(needed) if name in schemas}}
    if "securitySchemes" in document.get("components", {}):
        components["securitySchemes"] = document["components"]["securitySchemes"]
    result = {key: document[key] for key in ("openapi", "info", "servers", "security") if key in document}
    result["paths"] = paths
    result["components"] = components
    return result


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as file:
        print(json.dumps(subset(json.load(file), sys.argv[2:]), indent=2, sort_keys=True))
