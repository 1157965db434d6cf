"""Helpers that more than one test tier uses (unit, integration, e2e, faults,
conformance, editors); a helper only one tier uses stays in that tier. No tier
imports another's modules, and this package imports none: tests/unit/test_quality.py
checks that."""
