#!/usr/bin/env bash
# Builds the seven executables: `Deploy/build.sh [debug|release]`. The Dockerfile and the dev
# script both build through this file, so they build the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
configuration=${1:-debug}
flags=(-c "$configuration")
[ "$configuration" = release ] && [ "${STATIC_STDLIB:-0}" = 1 ] && flags+=(--static-swift-stdlib)
swift build "${flags[@]}" >&2
echo "$(swift build "${flags[@]}" --show-bin-path)"
