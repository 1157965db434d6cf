"""Validators of the ACP conformance kit's scratch resource: deterministic
findings in the contract's ``acp-json`` shape (0-based lines, code points).

``emit.py NAME`` prints NAME's findings; ``emit.py --fix`` prints a unified
diff that turns "broken" into "fixed" in fixme.txt (the fix command).
"""

import difflib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def locate(path, word):
    lines = (HERE / path).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if word in line:
            return number, line.index(word)
    return None


def finding(path, word, message, code):
    place = locate(path, word)
    if place is None:
        return []
    location = {"path": path, "line": place[0], "character": place[1]}
    location.update(end_line=place[0], end_character=place[1] + len(word))
    return [{"location": location, "message": message, "code": code}]


def toggled_on():
    toggle = HERE / "toggle.txt"
    return toggle.exists() and toggle.read_text(encoding="utf-8").strip() == "fail"


FINDINGS = {
    "conf-required": lambda: finding("sample.py", "required_target", "required fails", "C1"),
    "conf-informational": lambda: finding(
        "sample.py", "informational_target", "informational fails", "C2"
    ),
    "conf-passing": lambda: [],
    "conf-toggle": lambda: (
        finding("sample.py", "toggle_target", "toggle fails", "C3") if toggled_on() else []
    ),
    "conf-fixable": lambda: finding("fixme.txt", "broken", "broken can be fixed", "C4"),
}


def fix():
    before = (HERE / "fixme.txt").read_text(encoding="utf-8")
    after = before.replace("broken", "fixed")
    diff = difflib.unified_diff(
        before.splitlines(True), after.splitlines(True), "a/fixme.txt", "b/fixme.txt"
    )
    sys.stdout.write("".join(diff))


if __name__ == "__main__":
    if sys.argv[1] == "--fix":
        fix()
    else:
        for item in FINDINGS[sys.argv[1]]():
            sys.stdout.write(json.dumps(item) + "\n")
