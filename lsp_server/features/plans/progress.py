"""A proposed fix's plan as work-done progress until it settles; cancelling
the progress cancels the plan. When it settles, one message says what now."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from lsprotocol import types

from acp_client.appliable import constrained_because
from acp_client.models import WORKING_PLAN_STATES, Plan, PlanState
from lsp_server.editor import Editor

CancelPlan = Callable[[str], Coroutine[Any, Any, object]]


class PlanProgress:
    def __init__(self, editor: Editor, cancel_plan: CancelPlan) -> None:
        self._editor = editor
        self._cancel_plan = cancel_plan
        self._tokens: dict[str, str] = {}  # plan id -> token, until it settles
        self._starting: set[str] = set()  # tokens the editor is being asked for
        self._begun: set[str] = set()  # tokens whose begin went out
        self._settled: dict[str, str] = {}  # token -> end message, settled before its begin

    def follow(self, plan: Plan, title: str, with_progress: bool) -> None:
        token = f"acp-plan-{plan.id}"
        self._tokens[plan.id] = token
        if with_progress:
            self._starting.add(token)
            self._editor.spawn(self._start(token, title, plan))

    async def _start(self, token: str, title: str, plan: Plan) -> None:
        begin = types.WorkDoneProgressBegin(title=title, message=str(plan.state), cancellable=True)
        try:
            begun = await self._editor.start_progress(
                token, begin, lambda: self._cancel_plan(plan.id)
            )
        finally:
            self._starting.discard(token)
        if not begun:  # refused: the messages still come
            self._settled.pop(token, None)
            return
        self._begun.add(token)
        if plan.id not in self._tokens:  # it settled while the editor was answering
            self._finish(token, self._settled.pop(token, ""))

    def changed(self, plan: Plan) -> None:
        """A ``plan.changed`` event."""
        token = self._tokens.get(plan.id)
        if token is None:
            return
        live = token in self._begun
        if plan.state in WORKING_PLAN_STATES:
            if live:
                self._editor.report_progress(token, f"{plan.phase}: {plan.state}")
            return
        del self._tokens[plan.id]
        if live:
            self._finish(token, str(plan.state))
        elif token in self._starting:
            self._settled[token] = str(plan.state)
        kind = (
            types.MessageType.Info
            if plan.state is PlanState.COMPLETE
            else types.MessageType.Warning
        )
        self._editor.say(settled_message(plan), kind)

    def _finish(self, token: str, message: str) -> None:
        self._begun.discard(token)
        self._editor.end_progress(token, message)


def settled_message(plan: Plan) -> str:
    if plan.state is PlanState.COMPLETE:
        return (
            f"Plan “{plan.title}” is ready ({', '.join(plan.paths)}): preview or apply it from "
            "the code actions on those files."
        )
    if plan.state is PlanState.CONSTRAINED:
        return (
            f"Plan “{plan.title}” is constrained: {constrained_because(plan)}. Preview it, and "
            "apply it anyway from the code actions if it is still wanted (recorded as forced)."
        )
    reason = f": {plan.reason}" if plan.reason else ""
    return f"Plan “{plan.title}” is {plan.state}{reason}."
