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
    out = sys.stdout
    for n in range(args.first, args.first + args.files):
        path = f"pkg/m{n:05d}.py"
        out.writelines(
            f"{path}:{k % 12 + 1}:4: {args.tag} finding {k} of {path}\n"
            for k in range(args.per_file)
        )


if __name__ == "__main__":
    main()
