"""The backend's parts every handler gets, and its background tasks."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from acp_backend.eventlog import EventLog
from acp_backend.registry import Registry
from acp_backend.store import Store
from acp_client.errors import InvalidState

log = logging.getLogger(__name__)

T = TypeVar("T")


class TaskSet:
    """Background tasks the backend owns (validation runs, plan work).

    Each task is referenced until it finishes (so it is not garbage
    collected mid-run), a failure is logged, and ``aclose`` cancels and
    awaits whatever is still running.
    """

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    def spawn(self, coro: Coroutine[Any, Any, T], *, name: str) -> asyncio.Task[T]:
        if self._closed:
            coro.close()
            raise InvalidState("the backend is shutting down", remedy="retry once it restarts")
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def __len__(self) -> int:
        return len(self._tasks)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())

    async def aclose(self) -> None:
        self._closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@dataclass
class Services:
    """The backend's parts every handler gets (its store, registry, event log
    and background tasks) and the services made on them."""

    data_dir: Path
    store: Store
    registry: Registry
    events: EventLog
    tasks: TaskSet = field(default_factory=TaskSet)
    _services: dict[type[Any], Any] = field(default_factory=dict, repr=False)

    def service(self, kind: type[T], make: Callable[[Services], T]) -> T:
        """This backend's one ``kind`` (a service's own state, e.g. its running
        validations), made by ``make`` on first use."""
        found = self._services.get(kind)
        if found is None:
            found = self._services[kind] = make(self)
        return cast(T, found)
