"""Shared helpers of the validation tests."""

from __future__ import annotations

from acp_backend.validation.config import ValidationConfig, parse_config
from tests.support.validation import FIXTURES

SOURCES = FIXTURES / "sources"


def declared(body: str) -> ValidationConfig:
    """One validation from the body of its ``[[validations]]`` table (name and
    mode are filled in when the body does not give them)."""
    head = "" if "name =" in body else 'name = "v"\n'
    head += "" if "mode =" in body else 'mode = "required"\n'
    head += "" if "command =" in body else 'command = ["true"]\n'
    (config,) = parse_config(f"[[validations]]\n{head}{body}")
    return config
