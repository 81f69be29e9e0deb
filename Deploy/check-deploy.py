"""Checks the deployment files without a Docker engine: docker-compose.yml against the Compose
specification's JSON schema (../shared/reference, else the copy in Deploy/), every executable
run by a compose service, and
the Dockerfile building through the same Deploy/build.sh the dev script uses."""
import json
import pathlib
import sys

import jsonschema
import yaml

root = pathlib.Path(__file__).resolve().parent.parent
schema_path = root.parent / "shared" / "reference" / "compose-spec.schema.json"
if not schema_path.exists():
    schema_path = root / "Deploy" / "compose-spec.schema.json"
executables = ["gateway", "users-service", "data-service", "relations-service",
               "messaging-service", "files-service", "geo-service"]
failures = []

compose = yaml.safe_load((root / "docker-compose.yml").read_text())
schema = json.loads(schema_path.read_text())
for error in jsonschema.Draft7Validator(schema).iter_errors(compose):
    failures.append(f"docker-compose.yml: {'/'.join(map(str, error.path))}: {error.message}")

services = compose.get("services", {})
for executable in executables:
    command = services.get(executable, {}).get("command", [])
    if command != [f"./{executable}"]:
        failures.append(f"docker-compose.yml: service {executable} must run ./{executable}")
published = [name for name, service in services.items() if service.get("ports")]
if published != ["gateway"]:
    failures.append(f"docker-compose.yml: only the gateway may publish ports, found {published}")
if "healthcheck" not in services.get("postgres", {}):
    failures.append("docker-compose.yml: postgres needs a health check")

dockerfile = (root / "Deploy" / "Dockerfile").read_text()
if "Deploy/build.sh release" not in dockerfile:
    failures.append("Deploy/Dockerfile must build with Deploy/build.sh")
for executable in executables:
    if executable not in dockerfile:
        failures.append(f"Deploy/Dockerfile does not copy {executable}")
if "build_project" not in (root / "Deploy" / "dev.sh").read_text():
    failures.append("Deploy/dev.sh must build with Deploy/build.sh (build_project)")

for failure in failures:
    print(failure, file=sys.stderr)
print("deploy checks: " + ("FAILED" if failures else "ok"))
sys.exit(1 if failures else 0)
