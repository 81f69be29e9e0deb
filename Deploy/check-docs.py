#!/usr/bin/env python3
"""Keeps the documents true to the tree they describe. Fails (exit 1, naming each problem) when

- a path in backticks that names something in the repository (`Services/…`, `Shared/…`, `Deploy/…`,
  …) in README.md, ARCHITECTURE.md or docs/*.md does not exist;
- a relative Markdown link points at a missing file, or at a heading its target does not have;
- a step of one of ARCHITECTURE.md's request walks names a file that does not exist, or a type or
  member that the file no longer declares (`Type`, `Type.member`, `Type.Nested`, `function`), or a
  walk has fewer steps than a walk can honestly have.

A walk step is a numbered line: "N. `path/File.swift` · `Name`, `Name.member` — what happens".

    Deploy/check-docs.py              check the repository
    Deploy/check-docs.py --self-test  show that each kind of problem is caught
"""
import os
import re
import sys
import tempfile

TOP_LEVEL = ("Services/", "Shared/", "Tests/", "Deploy/", "Benchmarks/", "Fuzz/", "docs/", ".ci/")
WALKS = ("A REST read", "A file download", "A real-time subscription")
MIN_STEPS = 6
STEP = re.compile(r"^\s*\d+\.\s+`([^`]+)`\s+·\s+(.*?)\s+—\s")
NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)`")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
TYPE_KEYWORDS = r"(?:struct|class|actor|enum|protocol|typealias|extension)"


def documents(root):
    names = ["README.md", "ARCHITECTURE.md"]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        names += [os.path.join("docs", n) for n in sorted(os.listdir(docs)) if n.endswith(".md")]
    return [n for n in names if os.path.isfile(os.path.join(root, n))]


def looks_like_repo_path(span):
    if not span.startswith(TOP_LEVEL) or any(c in span for c in " {}<>*…|$"):
        return False
    # The Files API's examples name files like `docs/a.pdf`; the repository's docs/ holds Markdown.
    return not span.startswith("docs/") or span.endswith(".md")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", f.read(), re.M)}


def check_paths_and_links(root, name, text, problems):
    for number, line in enumerate(text.split("\n"), 1):
        for span in CODE_SPAN.findall(line):
            if looks_like_repo_path(span) and not os.path.exists(os.path.join(root, span.rstrip("/"))):
                problems.append(f"{name}:{number}: `{span}` does not exist")
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(root, os.path.dirname(name), file)) if file else os.path.join(root, name)
            if not os.path.exists(resolved):
                problems.append(f"{name}:{number}: link to {target}: no such file")
            elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                problems.append(f"{name}:{number}: link to {target}: no such heading")


def declares_type(source, name):
    return re.search(rf"\b{TYPE_KEYWORDS}\s+{re.escape(name)}\b", source) is not None


def declares_member(source, name):
    if name == "init":
        return re.search(r"\binit\s*[(<?]", source) is not None
    pattern = rf"\b(?:func|var|let|case|static func|static var|static let)\s+{re.escape(name)}\b"
    return re.search(pattern, source) is not None


def declared(source, dotted):
    parts = dotted.split(".")
    for part in parts:
        if part[0].isupper():
            if not declares_type(source, part):
                return False
        elif not declares_member(source, part):
            return False
    return True


def walk_sections(text):
    """{walk title: [lines]} for each `### Walk …` heading of ARCHITECTURE.md."""
    sections, current = {}, None
    for line in text.split("\n"):
        heading = re.match(r"^#{2,4}\s+(.*)$", line)
        if heading:
            title = heading.group(1).strip()
            current = next((w for w in WALKS if title.startswith(w)), None)
            if current:
                sections[current] = []
            continue
        if current:
            sections[current].append(line)
    return sections


def check_walks(root, text, problems):
    """Checks every walk step; answers how many steps and names it checked."""
    sections = walk_sections(text)
    checked_steps = checked_names = 0
    for walk in WALKS:
        if walk not in sections:
            problems.append(f"ARCHITECTURE.md: the walk '{walk}' is missing")
            continue
        steps = 0
        for line in sections[walk]:
            step = STEP.match(line)
            if not step:
                continue
            steps += 1
            path, names = step.group(1), NAME.findall(step.group(2))
            checked_steps, checked_names = checked_steps + 1, checked_names + len(names)
            full = os.path.join(root, path)
            if not os.path.isfile(full):
                problems.append(f"ARCHITECTURE.md ({walk}): `{path}` does not exist")
                continue
            if not names:
                problems.append(f"ARCHITECTURE.md ({walk}): the step for `{path}` names no type or function")
            with open(full, encoding="utf-8") as f:
                source = f.read()
            for dotted in names:
                if not declared(source, dotted):
                    problems.append(f"ARCHITECTURE.md ({walk}): `{path}` no longer declares `{dotted}`")
        if steps < MIN_STEPS:
            problems.append(f"ARCHITECTURE.md ({walk}): {steps} steps; a walk names every file it touches")
    return checked_steps, checked_names


def check(root, counts=None):
    problems = []
    for name in documents(root):
        with open(os.path.join(root, name), encoding="utf-8") as f:
            text = f.read()
        check_paths_and_links(root, name, text, problems)
        if name == "ARCHITECTURE.md":
            steps, names = check_walks(root, text, problems)
            if counts is not None:
                counts.update(steps=steps, names=names)
    if "ARCHITECTURE.md" not in documents(root):
        problems.append("ARCHITECTURE.md is missing")
    return problems


def self_test():
    """A small tree whose documents are wrong in every way the check knows; each must be caught."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "Shared/Thing"))
        with open(os.path.join(root, "Shared/Thing/Thing.swift"), "w") as f:
            f.write("struct Thing {\n    func run() {}\n}\nextension Thing { static let shared = Thing() }\n")
        steps = "".join(f"{i}. `Shared/Thing/Thing.swift` · `Thing`, `Thing.run`, `Thing.shared` — fine\n" for i in range(1, 7))
        walks = "".join(f"### {w}\n\n{steps}\n" for w in WALKS)
        good = f"# A\n\n## B c\n\nSee `Shared/Thing/Thing.swift` and [b](#b-c).\n\n{walks}"
        with open(os.path.join(root, "ARCHITECTURE.md"), "w") as f:
            f.write(good)
        assert check(root) == [], check(root)
        broken = good.replace("[b](#b-c)", "[b](#nowhere) [x](docs/X.md)").replace(
            "`Shared/Thing/Thing.swift` and", "`Shared/Thing/Gone.swift` and")
        broken = broken.replace("`Thing.run`", "`Thing.walk`", 1).replace("`Thing`, ", "`Other`, ", 1)
        with open(os.path.join(root, "ARCHITECTURE.md"), "w") as f:
            f.write(broken.replace(f"### {WALKS[2]}", "### Elsewhere"))
        found = "\n".join(check(root))
        for expected in ("Gone.swift` does not exist", "#nowhere: no such heading", "docs/X.md: no such file",
                         "declares `Thing.walk`", "declares `Other`", f"'{WALKS[2]}' is missing"):
            assert expected in found, f"not caught: {expected}\n{found}"
    print("check-docs self-test: every kind of problem caught")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    counts = {}
    problems = check(root, counts)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        print(f"check-docs: {len(problems)} problems in the documents", file=sys.stderr)
        return 1
    print(f"check-docs: the documents name only what exists ({counts.get('steps', 0)} walk steps, "
          f"{counts.get('names', 0)} declarations checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
