#!/usr/bin/env python3
"""Prints the `swift test --filter` patterns of the tests tagged `fast` (`Deploy/test.sh --fast`),
one per line: `Suite/` for a tagged suite, `Suite/test\\(` for a tagged test (regular expressions). The tag in the source
is what decides; this toolchain's `swift test` cannot filter by tag itself."""
import pathlib
import re

root = pathlib.Path(__file__).resolve().parent.parent
declaration = re.compile(r"@(Suite|Test)\(([^\n]*?\.tags\([^)]*\.fast[^)]*\)[^\n]*?)\)\s*(?:struct|final class|class|func)\s+(\w+)")
suite_name = re.compile(r"^(?:@Suite[^\n]*\s)?(?:package |public )?(?:final )?(?:struct|class)\s+(\w+)", re.M)

patterns = []
for path in sorted((root / "Tests").rglob("*.swift")):
    text = path.read_text()
    for match in declaration.finditer(text):
        kind, name = match.group(1), match.group(3)
        if kind == "Suite":
            patterns.append(f"{name}/")
            continue
        suites = [s.group(1) for s in suite_name.finditer(text, 0, match.start())]
        if suites:
            patterns.append(f"{suites[-1]}/{name}\\(")
print("\n".join(patterns))
