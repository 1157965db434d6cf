"""A background task's unexpected error is logged once, when it ends.

Left unretrieved, asyncio reports it when the task is garbage-collected,
from inside whatever runs then: in CI that was an ``ast.parse`` in another
test, whose traceback formatting parsed again and tripped CPython 3.11's
"AST constructor recursion depth mismatch".
"""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Any

import pytest

from lsp_server.editor import report_failure


async def fails() -> None:
    raise AttributeError("'Client' object has no attribute 'plan_preview'")


async def waits() -> None:
    await asyncio.Event().wait()


async def test_a_failed_task_is_logged_when_it_ends_and_never_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = asyncio.get_running_loop()
    unhandled: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _, context: unhandled.append(context))
    try:
        task = loop.create_task(fails(), name="learn plan P1")
        task.add_done_callback(report_failure)
        with caplog.at_level(logging.ERROR, logger="lsp_server.editor"):
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        del task
        gc.collect()
    finally:
        loop.set_exception_handler(None)
    [record] = caplog.records
    assert record.getMessage() == "background task learn plan P1 failed"
    assert record.exc_info is not None and "plan_preview" in str(record.exc_info[1])
    assert unhandled == []  # nothing left for the collector to report


async def test_a_cancelled_or_finished_task_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    loop = asyncio.get_running_loop()
    finished = loop.create_task(asyncio.sleep(0))
    cancelled = loop.create_task(waits())
    for task in (finished, cancelled):
        task.add_done_callback(report_failure)
    await asyncio.sleep(0)
    cancelled.cancel()
    with caplog.at_level(logging.DEBUG):
        await asyncio.gather(finished, cancelled, return_exceptions=True)
        await asyncio.sleep(0)
    assert caplog.records == []
