"""Whether a plan can be applied: one rule for the backend that applies it
and for every client that offers or asks for the apply."""

from __future__ import annotations

from dataclasses import dataclass

from acp_client.models import APPLIABLE_PLAN_STATES, WORKING_PLAN_STATES, Plan, PlanState

CONSTRAINED_BY_DEFAULT = "a required validation failed in its sandbox"


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why not (a sentence about the plan, "it is ..."), and what to do."""

    reason: str
    remedy: str


def why_not_appliable(plan: Plan, force: bool = False) -> Refusal | None:
    """None when ``plan`` may be applied now (a constrained plan only with
    ``force``); otherwise why not and what to do instead."""
    if plan.state is PlanState.CONSTRAINED and not force:
        return Refusal(
            f"it is constrained: {constrained_because(plan)}",
            "fix what the validation reports and propose again, or apply it anyway "
            "(forced, and recorded as such)",
        )
    if plan.state in APPLIABLE_PLAN_STATES:
        return None
    if plan.state is PlanState.IN_EDITOR:
        return Refusal(
            "it is applied in an editor already, not saved yet",
            "save the files there to keep it, or undo it there",
        )
    if plan.state in WORKING_PLAN_STATES:
        return Refusal(
            f"it is {plan.state}: its change set is not ready yet",
            "wait until it is complete (plan.changed says when)",
        )
    return Refusal(f"it is {plan.state}: there is nothing to apply", "propose a new plan")


def constrained_because(plan: Plan) -> str:
    """The reason a constrained plan gives, or the general one."""
    return plan.reason or CONSTRAINED_BY_DEFAULT
