"""The server's user settings: one typed model, read from the editor.

Sources, later ones winning: ``initializationOptions`` (either the settings
object itself or ``{"acp": {...}}``), then the ``acp`` section
(``lsp_server.advertised.SECTION``) of ``workspace/configuration``,
refreshed on ``workspace/didChangeConfiguration``.

Names on the wire are camelCase (``runOn``); the editors' configuration
schemas (VS Code's ``contributes.configuration``) are generated from and
checked against this model, so every field carries its description.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel


class RunOn(StrEnum):
    SAVE = "save"
    CHANGE = "change"
    MANUAL = "manual"


class Settings(BaseModel):
    """Everything a user can set. Unknown keys are ignored (newer editors'
    configuration keeps working with an older server)."""

    model_config = ConfigDict(
        frozen=True, extra="ignore", alias_generator=to_camel, populate_by_name=True
    )

    run_on: RunOn = Field(
        default=RunOn.SAVE,
        description="When the server starts validation runs for a file: `save` (on every "
        "save), `change` (while typing, after `debounceMs` of quiet) or `manual` (never by "
        "itself; results of runs started elsewhere still show).",
    )
    debounce_ms: int = Field(
        default=500,
        ge=0,
        le=60_000,
        description="With `runOn: change`, milliseconds of quiet after the last edit before a "
        "run starts; each new edit restarts the wait.",
    )
    clear_on_edit: bool = Field(
        default=False,
        description="Remove a file's diagnostics as soon as it is edited (or opened with "
        "content other than the validators saw), instead of keeping them until the next "
        "result arrives.",
    )
    unsafe_fixes: bool = Field(
        default=False,
        description='Let "Fix all" (`source.fixAll.acp`) take the fixes their tools call '
        "unsafe (they may change what the code does), as ruff's `--unsafe-fixes` does. "
        "Off: only safe fixes; an unsafe one is still offered on its own, marked unsafe.",
    )
    progress: bool = Field(
        default=True,
        description="Show validation runs as work-done progress in clients that support it; "
        "cancelling the progress cancels the run in the backend.",
    )


def settings_schema() -> dict[str, Any]:
    """JSON Schema of the settings, keyed by their wire (camelCase) names."""
    return Settings.model_json_schema(by_alias=True)


def parse_settings(raw: object) -> tuple[Settings, str | None]:
    """Settings from what the editor sent, plus one message if any was invalid.

    An invalid field falls back to its default (valid fields are kept); the
    message names every bad field and why, for one ``window/showMessage``.
    """
    if raw is None:
        return Settings(), None
    if not isinstance(raw, dict):
        return Settings(), (
            f"acp settings must be an object, not {type(raw).__name__}; using the defaults"
        )
    try:
        return Settings.model_validate(raw), None
    except ValidationError as exc:
        problems: dict[str, str] = {}
        for error in exc.errors():
            field = str(error["loc"][0]) if error["loc"] else "?"
            problems.setdefault(field, error["msg"])
    valid = {key: value for key, value in raw.items() if key not in problems}
    details = "; ".join(f"acp.{field}: {msg}" for field, msg in sorted(problems.items()))
    return Settings.model_validate(valid), f"Invalid setting ignored, using its default: {details}"
