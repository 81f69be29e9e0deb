"""Validates an OpenAPI 3.1 document with PyPI's openapi-spec-validator: prints every error
found and exits 1 if there is one, else prints "valid" and exits 0."""
import json
import sys

from openapi_spec_validator import OpenAPIV31SpecValidator

with open(sys.argv[1], encoding="utf-8") as file:
    document = json.load(file)
errors = list(OpenAPIV31SpecValidator(document).iter_errors())
for error in errors:
    print(f"{'/'.join(map(str, error.absolute_path))}: {error.message}")
print("valid" if not errors else f"{len(errors)} errors")
sys.exit(1 if errors else 0)
