"""Which declared validations a ``validation.run`` starts."""

from __future__ import annotations

import posixpath

from acp_backend.validation.config import LoadedConfig, ValidationConfig
from acp_backend.validation.locations import path_in_root
from acp_client.errors import InvalidParams, InvalidState, OutsideRoot
from acp_client.paths import CONFIG_FILE, NotAFilePath


def select_validations(
    loaded: LoadedConfig,
    root: str,
    names: tuple[str, ...] | None = None,
    paths: tuple[str, ...] | None = None,
) -> tuple[ValidationConfig, ...]:
    """The validations named (all when ``names`` is None) whose ``applies_to``
    matches one of the changed ``paths`` (any, when ``paths`` is None)."""
    declared = loaded.validations
    if not declared:
        if loaded.error is not None:
            raise InvalidState(str(loaded.error), remedy=f"fix {CONFIG_FILE}")
        raise InvalidState(
            f"{posixpath.join(root, CONFIG_FILE)} declares no validations",
            remedy="declare them as [[validations]] tables in that file",
        )
    if names is not None:
        known = {config.name for config in declared}
        unknown = [name for name in names if name not in known]
        if unknown:
            raise InvalidParams(
                f"params.validations: no validation named {', '.join(map(repr, unknown))}; "
                f"declared: {', '.join(sorted(known))}"
            )
        declared = tuple(config for config in declared if config.name in names)
    if paths is not None:
        changed = tuple(logical_path(path, root) for path in paths)
        declared = tuple(config for config in declared if config.applies_to_any(changed))
    return declared


def logical_path(path: str, root: str) -> str:
    """A changed path as the validations' globs see it: relative to ``root``."""
    try:
        relative = path_in_root(path, root)
    except NotAFilePath as exc:
        raise InvalidParams(f"params.paths: {exc}") from None
    if relative is None:
        raise OutsideRoot(f"params.paths: {path} is outside the resource root {root}")
    return relative
