"""The facade: aliases, param validation, error shapes, handlers, shutdown."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from acp_backend.facade import BackendFacade, create_facade
from acp_backend.routes import AT_SERVE, AT_START, ROUTES, resolve
from acp_backend.services import Services, TaskSet
from acp_client.errors import (
    InternalError,
    InvalidState,
    RemoteError,
    VersionMismatch,
)
from acp_client.events import ResourceChanged, parse_event
from acp_client.operations import (
    OPERATIONS,
    PROTOCOL_VERSION,
    InitializeResult,
    PlanListParams,
    ResourceListResult,
)
from acp_client.version import __version__


async def error_of(facade: BackendFacade, method: str, params: Any) -> dict[str, Any]:
    with pytest.raises(RemoteError) as caught:
        await facade.dispatch(method, params)
    return caught.value.to_error_object()


async def test_initialize_negotiates_and_lists_what_is_implemented(facade: BackendFacade) -> None:
    result = InitializeResult.model_validate(
        await facade.dispatch("acp.initialize", {"protocol_version": "1.7"})
    )
    assert result.protocol_version == PROTOCOL_VERSION
    assert {"acp.initialize", "resource.list", "resource.resolve"} <= set(result.operations)
    assert set(result.operations) == set(ROUTES) == set(OPERATIONS)
    assert "resource.changed" in result.events and "stream.reset" in result.events
    assert (result.server_name, result.server_version) == ("acp-backend", __version__)


async def test_an_incompatible_major_version_is_a_version_mismatch(
    facade: BackendFacade,
) -> None:
    with pytest.raises(VersionMismatch) as caught:
        await facade.dispatch("acp.initialize", {"protocol_version": "2.0"})
    assert "2.0" in caught.value.message and caught.value.remedy


async def test_a2a_aliases_reach_the_same_handler(facade: BackendFacade) -> None:
    ours = await facade.dispatch("resource.list", {})
    theirs = await facade.dispatch("_cleveragents/registry/resources/list", None)
    assert ours == theirs == ResourceListResult(resources=()).model_dump(mode="json")


async def test_unknown_method_is_32601_naming_it(facade: BackendFacade) -> None:
    error = await error_of(facade, "resource.frobnicate", {})
    assert error["code"] == -32601
    assert "resource.frobnicate" in error["message"]
    assert error["data"]["method"] == "resource.frobnicate"


async def test_an_operation_without_a_backend_side_yet_says_so(
    facade: BackendFacade, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(ROUTES, "plan.list")
    error = await error_of(facade, "plan.list", {})
    assert error["code"] == -32601
    assert error["message"] == "plan.list is not implemented by this backend yet"
    initialized = await facade.dispatch("acp.initialize", {})
    assert "plan.list" not in initialized["operations"]


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("resource.unregister", {}, "params.resource: field required"),
        ("resource.register", {"path": 7}, "params.path: input should be a valid string"),
        ("resource.list", {"verbose": True}, "params.verbose: extra inputs are not permitted"),
        ("resource.register", ["/x"], "params of resource.register must be an object"),
    ],
)
async def test_bad_params_are_32602_naming_the_field(
    facade: BackendFacade, method: str, params: Any, message: str
) -> None:
    error = await error_of(facade, method, params)
    assert error["code"] == -32602
    assert error["message"].startswith(message)
    assert error["data"]["code"] == "INVALID_PARAMS"


async def test_every_bad_field_is_listed_in_the_data(facade: BackendFacade) -> None:
    error = await error_of(facade, "resource.register", {"name": 1, "extra": 2})
    assert error["message"].endswith("(and 2 more)")
    fields = {problem["field"] for problem in error["data"]["errors"]}
    assert fields == {"params.path", "params.name", "params.extra"}


async def broken(services: Services, params: PlanListParams) -> ResourceListResult:
    """A handler that breaks, as a bug in a service would."""
    raise RuntimeError("secret detail at /home/someone/.token")


async def wrong(services: Services, params: PlanListParams) -> ResourceListResult:
    return ResourceListResult(resources=())


@pytest.fixture
def failing_plan_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ROUTES, "plan.list", f"{__name__}:broken")


@pytest.mark.usefixtures("failing_plan_list")
async def test_an_unexpected_failure_is_a_generic_internal_error(
    facade: BackendFacade, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        error = await error_of(facade, "plan.list", {})
    assert error["code"] == -32603
    assert error["message"] == "internal error while handling plan.list"
    wire = json.dumps(error)
    assert "secret" not in wire and "Traceback" not in wire and "RuntimeError" not in wire
    assert "secret detail" in caplog.text  # the traceback went to the log instead


async def test_a_handler_returning_the_wrong_model_is_an_internal_error(
    facade: BackendFacade, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(ROUTES, "plan.list", f"{__name__}:wrong")
    with pytest.raises(InternalError):
        await facade.dispatch("plan.list", {})


def test_every_route_and_hook_names_a_function_of_the_contract() -> None:
    assert set(ROUTES) <= set(OPERATIONS)
    for target in ROUTES.values():
        assert inspect.iscoroutinefunction(resolve(target)), target
    for target in (*AT_START, *AT_SERVE):
        hook = resolve(target)
        assert callable(hook) and not inspect.iscoroutinefunction(hook), target


async def test_resource_operations_round_trip_with_events(
    facade: BackendFacade, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    stream = facade.subscribe(after=0)
    registered = await facade.dispatch("resource.register", {"path": str(project)})
    resolved = await facade.dispatch("resource.resolve", {"path": f"{project}/a.py"})
    assert resolved == {"resource": registered, "logical_path": "a.py", "sandbox": False}
    removed = await facade.dispatch("resource.unregister", {"resource": "proj"})
    assert removed == registered
    changes = [parse_event(await anext(stream)) for _ in range(2)]
    assert [(type(e), e.change) for e in changes if isinstance(e, ResourceChanged)] == [
        (ResourceChanged, "registered"),
        (ResourceChanged, "unregistered"),
    ]
    await stream.aclose()


async def test_task_set_cancels_what_is_still_running_on_close() -> None:
    tasks = TaskSet()
    started = asyncio.Event()

    async def forever() -> None:
        started.set()
        await asyncio.sleep(3600)

    task = tasks.spawn(forever(), name="forever")
    done = tasks.spawn(asyncio.sleep(0), name="quick")
    await started.wait()
    await done
    assert len(tasks) == 1
    await tasks.aclose()
    assert task.cancelled() and len(tasks) == 0
    with pytest.raises(InvalidState):
        tasks.spawn(asyncio.sleep(0), name="too late")


async def test_a_closed_facade_refuses_calls_and_ends_streams(tmp_path: Path) -> None:
    facade = create_facade(tmp_path / "data")
    stream = facade.subscribe()
    pending = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.05)
    await facade.aclose()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(pending, 2)
    with pytest.raises(InvalidState):
        await facade.dispatch("resource.list", {})
    await facade.aclose()  # idempotent


def test_retention_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP_EVENT_RETENTION", "3")
    facade = create_facade(tmp_path / "a")
    assert facade.services.events.retention == 3
    asyncio.run(facade.aclose())
    monkeypatch.setenv("ACP_EVENT_RETENTION", "lots")
    with pytest.raises(InvalidState, match="ACP_EVENT_RETENTION"):
        create_facade(tmp_path / "b")


async def test_stored_results_are_read_back_off_the_event_loop(
    facade: BackendFacade, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Validating 100,000 stored findings takes ~0.25 s: not on the loop.
    resource = await facade.dispatch("resource.register", {"path": str(workspace)})
    store = facade.services.store
    read_on: list[threading.Thread] = []
    real = store.latest_results

    def recording(*args: Any) -> Any:
        read_on.append(threading.current_thread())
        return real(*args)

    monkeypatch.setattr(store, "latest_results", recording)
    listed = await facade.dispatch("validation.list_results", {"resource": resource["id"]})
    assert listed["results"] == []
    assert read_on and read_on[0] is not threading.main_thread()
