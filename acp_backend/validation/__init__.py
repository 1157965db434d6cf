"""Validations: run the tools a resource declares in acp.toml and report their findings."""
