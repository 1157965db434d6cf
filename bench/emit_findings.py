"""A validator for the benchmarks: prints ``path:line:col: message`` lines.

``python bench/emit_findings.py FILES PER_FILE [--tag T] [--first N]``:
PER_FILE findings in each of ``pkg/mNNNNN.py`` for NNNNN from N (0) below
N + FILES, columns after non-ASCII text, as a real linter would print them.
"""

from __future__ import annotations

import argparse
import sys


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", type=int)
    parser.add_argument("per_file", type=int)
    parser.add_argument("--tag", default="B000")
    parser.add_argument("--first", type=int, default=0)
    args = parser.parse_args()
    tag, per_file = args.tag, args.per_file
    # One write of the whole output, its lines from one generator: a finding
    # costs this stand-in the same whether its file has one or ten of them
    # (a generator and a write a file made 10,000 one-finding files cost
    # ~8 ms more than 1,000 ten-finding ones, in both sides of the overlap).
    paths = (f"pkg/m{n:05d}.py" for n in range(args.first, args.first + args.files))
    lines = (
        f"{path}:{k % 12 + 1}:4: {tag} finding {k} of {path}\n"
        for path in paths
        for k in range(per_file)
    )
    sys.stdout.write("".join(lines))


if __name__ == "__main__":
    main()
