"""Print every TODO and FIXME marker in the project's Python files.

Output, one line per marker: ``path:line:column: KIND: text`` with 1-based
line and column (column in Unicode code points), which acp.toml reads with a
``pattern`` validator.
"""

import re
import sys
from pathlib import Path

MARKER = re.compile(r"#\s*(?P<kind>TODO|FIXME)\b:?\s*(?P<text>.*)")


def main() -> int:
    this_file = Path(__file__).resolve()
    for path in sorted(Path(".").rglob("*.py")):
        if path.resolve() == this_file:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            found = MARKER.search(line)
            if found:
                kind, text = found["kind"], found["text"].strip()
                print(f"{path.as_posix()}:{number}:{found.start() + 1}: {kind}: {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
