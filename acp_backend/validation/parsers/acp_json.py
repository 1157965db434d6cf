"""``acp-json``: one finding per line, in the contract's own ``Finding`` shape
(0-based lines, code-point characters, paths relative to the resource root)."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import TypeAdapter, ValidationError

from acp_backend.validation.config import ColumnUnit
from acp_backend.validation.raw import OutputError, RawFinding, iter_lines
from acp_client.models import Finding

_FINDING = TypeAdapter(Finding)


def parse_acp_json(text: str, unit: ColumnUnit | None) -> Iterator[RawFinding]:
    for number, line in enumerate(iter_lines(text), start=1):
        if not line.strip():
            continue
        try:
            finding = _FINDING.validate_json(line)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(part) for part in problem["loc"])
            detail = f"{where}: {problem['msg']}" if where else problem["msg"]
            raise OutputError(f"output line {number} is not a finding: {detail}") from None
        location = finding.location
        if location is None:
            yield RawFinding(finding.message, code=finding.code, severity=finding.severity)
            continue
        yield RawFinding(
            message=finding.message,
            path=location.path,
            line=location.line,
            column=location.character,
            end_line=location.end_line,
            end_column=location.end_character,
            unit=unit or ColumnUnit.CODE_POINTS,
            code=finding.code,
            severity=finding.severity,
        )
