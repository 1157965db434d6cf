"""Validators of the ACP conformance kit's scratch resource: deterministic
findings in the contract's ``acp-json`` shape (0-based lines, code points).

``emit.py NAME`` prints NAME's findings; ``emit.py --fix`` prints a unified
diff that turns "broken" into "fixed" in fixme.txt (the fix command).
"""

import difflib
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TARGETS = {
    "conf-required": ("sample.py", "required_target", "required fails", "C1"),
    "conf-informational": ("sample.py", "informational_target", "informational fails", "C2"),
    "conf-toggle": ("sample.py", "toggle_target", "toggle fails", "C3"),
    "conf-fixable": ("fixme.txt", "broken", "broken can be fixed", "C4"),
}


def findings(name: str) -> list[dict[str, Any]]:
    if name not in TARGETS:
        return []  # conf-passing
    if name == "conf-toggle":
        toggle = HERE / "toggle.txt"
        if not toggle.exists() or toggle.read_text(encoding="utf-8").strip() != "fail":
            return []
    path, word, message, code = TARGETS[name]
    for number, line in enumerate((HERE / path).read_text(encoding="utf-8").splitlines()):
        if word in line:
            start = line.index(word)
            location = {"path": path, "line": number, "character": start}
            location.update(end_line=number, end_character=start + len(word))
            return [{"location": location, "message": message, "code": code}]
    return []


def fix() -> str:
    before = (HERE / "fixme.txt").read_text(encoding="utf-8")
    after = before.replace("broken", "fixed")
    diff = difflib.unified_diff(
        before.splitlines(True), after.splitlines(True), "a/fixme.txt", "b/fixme.txt"
    )
    return "".join(diff)


if __name__ == "__main__":
    if sys.argv[1] == "--fix":
        sys.stdout.write(fix())
    else:
        for item in findings(sys.argv[1]):
            sys.stdout.write(json.dumps(item) + "\n")
