"""Fails when code that reads client input converts a number in a way that can trap.

Swift's integer initialisers trap on a floating-point value that is not finite or out of range,
and PostgresNIO binds a Date as Int64 microseconds with such a conversion: one client number
that reached one of them took a whole service down. In the query, value, JSON, real-time frame,
multipart and image code, integers are made from floating-point values only with
`Int64(exactly:)` (or `clamping:`/`truncatingIfNeeded:`), and instants only through
DataEngine's TimestampRange. A line that must do otherwise says why with `// conversion-checked:`.
"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
scanned = [
    "Shared/QueryLanguage", "Shared/DataEngine", "Shared/DataAPI", "Shared/InternalProtocol",
    "Services/Messaging/MessagingService/RealTime", "Services/Messaging/MessagingService/PubSub",
    "Services/Files/FilesService/Multipart", "Services/Files/FilesService/Images",
    "Services/Geo/GeoService", "Services/Data/DataService/QuickBlox",
]
integer_init = re.compile(r"\b(U?Int(?:8|16|32|64)?)\(")
safe_labels = ("exactly:", "clamping:", "truncatingIfNeeded:", "bitPattern:", "ascii:")
floating = re.compile(r"\.rounded|\bDouble\b|\bFloat\b|timeInterval|\bTimeInterval\b|(?<![$\w.])\d+\.\d|[*/]|\.(?:nanoseconds|seconds)\b")
instant = re.compile(r"Date\(timeIntervalSince1970:|Date\(timeInterval:")
string_literal = re.compile(r'"(?:[^"\\]|\\.)*"')
allowed_instant_files = {"Shared/DataEngine/Query/TimestampRange.swift"}


def arguments(line, start):
    """The text between the parenthesis at `start` and its match (the rest of the line if none)."""
    depth = 0
    for index in range(start, len(line)):
        if line[index] == "(":
            depth += 1
        elif line[index] == ")":
            depth -= 1
            if depth == 0:
                return line[start + 1:index]
    return line[start + 1:]


failures = []
for folder in scanned:
    for path in sorted((root / folder).rglob("*.swift")):
        relative = str(path.relative_to(root))
        lines = path.read_text().splitlines()
        codes = [string_literal.sub('""', line).split("//", 1)[0] for line in lines]
        for number, line in enumerate(lines, 1):
            code = codes[number - 1]
            if "conversion-checked:" in line or code.lstrip().startswith("///"):
                continue
            # A call the formatter wrapped: its arguments run on over the next lines.
            continued = " ".join([code] + codes[number:number + 4])
            for match in integer_init.finditer(code):
                argument = arguments(continued, match.end() - 1)
                # The clock's own time is no client's number.
                if argument.startswith(safe_labels) or not floating.search(argument) or "Date()" in argument:
                    continue
                failures.append(f"{relative}:{number}: {match.group(1)}({argument}) can trap; use {match.group(1)}(exactly:)")
            if instant.search(code) and relative not in allowed_instant_files and "Date()" not in code:
                failures.append(f"{relative}:{number}: an instant from a number; go through TimestampRange")

for failure in failures:
    print(failure, file=sys.stderr)
if failures:
    print(f"check-conversions: {len(failures)} unchecked conversion(s)", file=sys.stderr)
    sys.exit(1)
print("check-conversions: no unchecked conversions")
