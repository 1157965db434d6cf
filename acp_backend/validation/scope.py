"""What a run covers: ``{files}`` in a command, and merging a run that
covered some files into the previous result of the same validation.

A save runs the tool on the saved files only; a full run (no changed
paths) on every file under the working directory that ``applies_to``
matches (``.`` when it matches everything). A file's findings are replaced
only by a run that covered that file: the others are carried over.
"""

from __future__ import annotations

import os
import posixpath
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from acp_backend.validation.config import FILES_PLACEHOLDER, ValidationConfig, glob_matches
from acp_client.covered import merge_covered
from acp_client.models import Finding, ValidationResult

# Directories a full run never descends into: tools' caches, dependencies, VCS data.
_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages"})


@dataclass(frozen=True)
class Scope:
    """The command to run, and the root-relative files it covers (None: all)."""

    command: tuple[str, ...] | str
    covered: frozenset[str] | None


def scoped_command(
    config: ValidationConfig, root: Path, changed: tuple[str, ...] | None
) -> Scope | None:
    """The command with ``{files}`` expanded; None when there is nothing to check
    (a save of files that no longer exist, or no file matching ``applies_to``)."""
    if not config.uses_files:
        return Scope(config.command, None)
    cwd = posixpath.normpath(config.cwd) if config.cwd else "."
    if changed is None:
        files = sorted(_all_files(config, root, cwd)) if config.applies_to else ["."]
        covered: frozenset[str] | None = None
    else:
        concerned = [path for path in changed if config.applies_to_any((path,))]
        files = [path for path in concerned if (root / path).is_file()]
        covered = frozenset(concerned)  # a deleted file's findings go too
    if not files:
        return None if changed is None or not covered else Scope((), covered)
    arguments = [posixpath.relpath(path, cwd) if path != "." else "." for path in files]
    return Scope(_expand(config.command, arguments), covered)


def _expand(command: tuple[str, ...] | str, files: list[str]) -> tuple[str, ...] | str:
    if isinstance(command, str):
        return command.replace(FILES_PLACEHOLDER, shlex.join(files))
    expanded: list[str] = []
    for word in command:
        expanded += files if word == FILES_PLACEHOLDER else [word]
    return tuple(expanded)


def _all_files(config: ValidationConfig, root: Path, cwd: str) -> Iterator[str]:
    top = root / cwd
    for directory, subdirs, names in os.walk(top):
        subdirs[:] = [d for d in subdirs if not d.startswith(".") and d not in _SKIPPED_DIRS]
        relative_dir = Path(directory).relative_to(root).as_posix()
        for name in names:
            path = name if relative_dir == "." else f"{relative_dir}/{name}"
            if any(glob_matches(glob, path) for glob in config.applies_to):
                yield path


def merged_findings(
    new: tuple[Finding, ...], covered: frozenset[str], previous: ValidationResult | None
) -> tuple[Finding, ...]:
    """The run's own findings for the files it covered, then the previous
    result's for the files it did not (``acp_client.covered``)."""
    return merge_covered(new, covered, previous.findings if previous else ())


def merged_hashes(
    new: dict[str, str], covered: frozenset[str], previous: ValidationResult | None
) -> dict[str, str]:
    kept = {
        path: digest
        for path, digest in (previous.file_hashes if previous else {}).items()
        if path not in covered
    }
    return {**kept, **{path: digest for path, digest in new.items() if path in covered}}
