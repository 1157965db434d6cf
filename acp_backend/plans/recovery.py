"""What a backend finishes, at start, that a crash left undone: applies it
interrupted (their journals) and plans whose worker process died.

Most starts find neither, and a process that only reads (``acp-lsp check
--no-run``) should not pay for loading the plan machinery to learn that
(ADR 0032): a look at the journal folder and one query decide it.
"""

from __future__ import annotations

from acp_backend.plans.journal import journal_dir
from acp_backend.plans.records import PlanRecords
from acp_backend.services import Services


def settle(services: Services) -> None:
    journals = journal_dir(services.data_dir)
    interrupted = journals.is_dir() and any(journals.glob("*.json"))
    if not interrupted and not PlanRecords(services.store).orphaned():
        return
    # Only now: the plan machinery loads the validators' too.
    from acp_backend.plans.applying import recover
    from acp_backend.plans.lifecycle import plans_of

    plans = plans_of(services)
    recover(plans)
    plans.settle_orphans()
