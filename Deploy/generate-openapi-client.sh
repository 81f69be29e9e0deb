#!/usr/bin/env bash
# Regenerates the Swift client Tests/GeneratedClientTests drives, with apple/swift-openapi-generator
# (from the machine's package mirror), from the operations of the published description it uses
# (Tests/GeneratedClientTests/operations.txt). Run it when GeneratedClientTests reports that the
# description of those operations changed:
#   curl "$BAAS_URL/openapi.json" > doc.json && Deploy/generate-openapi-client.sh doc.json
# The generator is built once in .local/openapi-generator, a package of its own, so the product's
# build never compiles it (OPENAPI_GENERATOR names one built already); CI never runs this script.
set -euo pipefail
cd "$(dirname "$0")/.."
document=${1:?usage: Deploy/generate-openapi-client.sh DOCUMENT.json}
target=Tests/GeneratedClientTests

build_generator() {
  local tool=.local/openapi-generator
  mkdir -p "$tool/Sources/Placeholder"
  printf '%s\n' '// swift-tools-version:6.2' 'import PackageDescription' 'let package = Package(' \
    '    name: "openapi-generator-tool",' \
    '    dependencies: [.package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3")],' \
    '    targets: [.target(name: "Placeholder", path: "Sources/Placeholder")])' > "$tool/Package.swift"
  echo "// The generator's host package has no code of its own." > "$tool/Sources/Placeholder/Placeholder.swift"
  (cd "$tool" && swift build --product swift-openapi-generator >&2)
  echo "$(cd "$tool" && swift build --product swift-openapi-generator --show-bin-path)/swift-openapi-generator"
}

generator=${OPENAPI_GENERATOR:-$(build_generator)}
mapfile -t operations < "$target/operations.txt"
python3 Tests/Peers/openapi-subset.py "$document" "${operations[@]}" > "$target/openapi.json"
"$generator" generate "$target/openapi.json" --config "$target/openapi-generator-config.yaml" \
  --output-directory "$target/Generated"
for file in "$target"/Generated/*.swift; do
  # Generated code keeps the generator's layout, not ours.
  { echo "// swift-format-ignore-file"; cat "$file"; } > "$file.tmp" && mv "$file.tmp" "$file"
done
echo "generated $(ls "$target/Generated" | tr '\n' ' ')from $(wc -l < "$target/openapi.json") lines of description"
