"""The plan subsystem: change sets, sandboxes, the guarded apply (ADR 0009).

For hover provenance: ``plans_touching(store, resource_id, path, line)`` lists
the applied plans whose change sets produced that line, newest first.
"""

from acp_backend.plans.records import AppliedLines, plans_touching

__all__ = ["AppliedLines", "plans_touching"]
