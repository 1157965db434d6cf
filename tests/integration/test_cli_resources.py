"""``acp-backend`` as a user runs it: a real process on a fresh data dir."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acp_client.operations import ResourceListResult


def acp_backend(
    data_dir: Path, *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acp_backend.cli", "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
    )


def assert_one_error_line(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "projects" / "demo"
    path.mkdir(parents=True)
    return path


def test_list_on_a_fresh_data_dir_is_friendly(data_dir: Path) -> None:
    result = acp_backend(data_dir, "resource", "list")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "no resources registered; add one with: acp-backend resource add PATH\n"
    )
    assert result.stderr == ""
    as_json = acp_backend(data_dir, "resource", "list", "--json")
    assert json.loads(as_json.stdout) == {"resources": []}


def test_add_then_list_as_table_and_as_json(data_dir: Path, project: Path) -> None:
    added = acp_backend(data_dir, "resource", "add", "demo", cwd=project.parent)
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("registered demo (")
    other = project.parent / "second-one"
    other.mkdir()
    assert acp_backend(data_dir, "resource", "add", str(other), "--name", "b").returncode == 0

    table = acp_backend(data_dir, "resource", "list").stdout.splitlines()
    assert table[0].split() == ["NAME", "ID", "ROOT"]
    assert [line.split()[0] for line in table[1:]] == ["b", "demo"]
    # Columns are aligned: every root starts at the same offset.
    assert len({line.index("/") for line in table[1:]}) == 1

    listed = ResourceListResult.model_validate_json(
        acp_backend(data_dir, "resource", "list", "--json").stdout
    )
    assert [(r.name, r.root) for r in listed.resources] == [
        ("b", str(other)),
        ("demo", str(project)),
    ]


def test_resolve_and_remove(data_dir: Path, project: Path) -> None:
    acp_backend(data_dir, "resource", "add", str(project))
    resolved = acp_backend(data_dir, "resource", "resolve", str(project / "pkg" / "m.py"))
    assert resolved.stdout == "demo: pkg/m.py\n"
    removed = acp_backend(data_dir, "resource", "remove", "demo")
    assert removed.returncode == 0 and "removed demo" in removed.stdout
    assert "no resources registered" in acp_backend(data_dir, "resource", "list").stdout


def test_failures_are_one_line_with_a_remedy_and_exit_2(
    data_dir: Path, project: Path, tmp_path: Path
) -> None:
    acp_backend(data_dir, "resource", "add", str(project))
    assert_one_error_line(
        acp_backend(data_dir, "resource", "add", str(project), "--name", "again"),
        "already registered as 'demo'",
    )
    twin = tmp_path / "elsewhere" / "demo"
    twin.mkdir(parents=True)
    assert_one_error_line(
        acp_backend(data_dir, "resource", "add", str(twin)),
        "named 'demo' already exists",
        "(choose another name",
    )
    assert_one_error_line(
        acp_backend(data_dir, "resource", "add", str(tmp_path / "missing")), "no such directory"
    )
    assert_one_error_line(
        acp_backend(data_dir, "resource", "resolve", "/"),
        "not inside any registered resource",
        "(register its folder",
    )
    assert_one_error_line(acp_backend(data_dir, "resource", "remove", "ghost"), "'ghost'")


def test_adding_the_same_directory_again_is_a_no_op(
    data_dir: Path, project: Path, tmp_path: Path
) -> None:
    first = acp_backend(data_dir, "resource", "add", str(project))
    assert first.returncode == 0, first.stderr
    resource_id = first.stdout.split("(")[1].split(")")[0]
    for again in (
        ["resource", "add", str(project)],
        ["resource", "add", str(project), "--name", "demo"],
        ["resource", "add", "demo/"],  # relative, trailing slash: the same directory
    ):
        result = acp_backend(data_dir, *again, cwd=project.parent)
        assert result.returncode == 0, result.stderr
        assert result.stdout == f"demo ({resource_id}) is already registered at {project}\n"
        assert result.stderr == ""
    # Through a symlink, the real directory is what counts.
    link = tmp_path / "link"
    link.symlink_to(project)
    assert acp_backend(data_dir, "resource", "add", str(link)).returncode == 0
    # Still refused: another name for it, a subdirectory, another path under its name.
    sub = project / "sub"
    sub.mkdir()
    twin = tmp_path / "elsewhere" / "demo"
    twin.mkdir(parents=True)
    for refused in ([str(project), "--name", "other"], [str(twin)], [str(sub), "--name", "demo"]):
        assert acp_backend(data_dir, "resource", "add", *refused).returncode == 2
    listed = ResourceListResult.model_validate_json(
        acp_backend(data_dir, "resource", "list", "--json").stdout
    )
    assert [(r.id, r.root) for r in listed.resources] == [(resource_id, str(project))]


def test_an_unusable_data_dir_is_an_error_line(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    assert_one_error_line(
        acp_backend(not_a_dir, "resource", "list"), f"{not_a_dir} is not a directory"
    )


def test_a_refused_bind_is_an_error_line(data_dir: Path) -> None:
    assert_one_error_line(acp_backend(data_dir, "serve", "--host", "0.0.0.0"), "--insecure-bind")


def test_usage_errors_exit_2_with_usage(data_dir: Path) -> None:
    result = acp_backend(data_dir, "resource", "add")
    assert result.returncode == 2
    assert "usage:" in result.stderr and "Traceback" not in result.stderr


def test_two_processes_registering_the_same_directory_at_once(
    data_dir: Path, project: Path
) -> None:
    command = [sys.executable, "-m", "acp_backend.cli", "--data-dir", str(data_dir)]
    racers = [
        subprocess.Popen(
            [*command, "resource", "add", str(project), "--name", f"racer-{i}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    outcomes = sorted((racer.wait(timeout=60), racer.communicate()[1]) for racer in racers)
    assert [status for status, _ in outcomes] == [0, 2]
    assert "already registered" in outcomes[1][1]
    listed = ResourceListResult.model_validate_json(
        acp_backend(data_dir, "resource", "list", "--json").stdout
    )
    assert len(listed.resources) == 1
