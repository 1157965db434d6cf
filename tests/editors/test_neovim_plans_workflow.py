"""Real headless Neovim 0.11, configured with editors/neovim/lsp/acp_lsp.lua,
through three workflows of issue 26 on the demo's inventory.py, as a user
lives them (driver: nvim_plans_workflow_driver.lua):

- item 2: "Fix with ruff" still fits after unsaved edits on other lines
  moved its line, and removes exactly that line; once the line itself
  changes it is not offered (Neovim 0.11 shows no disabled actions);
- item 3: plans with the same title are told apart in the menu, and a plan
  the saved file no longer fits is offered only to cancel (or, made from a
  validation's fix, to propose again), while one made on the saved text fits;
- item 4: "Apply plan" picked in Neovim is in the editor (not applied) until
  saved; undone, the plan is back to complete; applied again and saved, it
  is applied.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from editor_harness import DemoProject, require_editor, run_editor
from editor_plans import BARE, FIXED, create_plan, plan_list, propose_fix
from test_neovim import CONFIG_DIR, PIP_INSTALL, pypi_nvim

DRIVER = Path(__file__).with_name("nvim_plans_workflow_driver.lua")
INVENTORY = "inventory.py"
FIX = "Fix with ruff: Remove unused import: `os`"
SAME_TITLE = "Same title"
FIXME = "    # FIXME: negative quantities should be rejected, not summed.\n"


def drive(project: DemoProject, tmp_path: Path, scenario: str, **env: str) -> dict[str, Any]:
    """Run the driver's ``scenario`` on inventory.py; what it recorded."""
    nvim = require_editor(pypi_nvim(), "Neovim >= 0.11", PIP_INSTALL)
    result_file = tmp_path / f"nvim-{scenario}.json"
    completed = run_editor(
        [str(nvim), "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {DRIVER}"],
        project,
        {
            "ACP_NVIM_CONFIG_DIR": str(CONFIG_DIR),
            "ACP_DEMO_FILE": str(project.root / INVENTORY),
            "ACP_DATA_DIR": str(project.data_dir),
            "ACP_SCENARIO": scenario,
            "ACP_RESULT_FILE": str(result_file),
            **env,
        },
    )
    assert result_file.exists(), f"Neovim wrote no result: {completed.stderr}"
    result: dict[str, Any] = json.loads(result_file.read_text(encoding="utf-8"))
    assert "error" not in result, json.dumps(result, indent=1, ensure_ascii=False)
    return result


def diff_of(root: Path, old: str, new: str) -> str:
    """A unified diff of inventory.py with ``old`` replaced by ``new``."""
    text = (root / INVENTORY).read_text(encoding="utf-8")
    assert old in text, f"examples/demo/{INVENTORY} no longer contains {old!r}"
    return "".join(
        difflib.unified_diff(
            text.splitlines(keepends=True),
            text.replace(old, new).splitlines(keepends=True),
            f"a/{INVENTORY}",
            f"b/{INVENTORY}",
        )
    )


def line_of(root: Path, text: str) -> int:
    """The 0-based line of inventory.py where ``text`` begins."""
    content = (root / INVENTORY).read_text(encoding="utf-8")
    return content[: content.index(text)].count("\n")


def enabled(actions: list[dict[str, Any]]) -> list[str]:
    """The titles a user can pick (a disabled action shows greyed out, if at all)."""
    return [action["title"] for action in actions if "disabled" not in action]


def name(plan: dict[str, Any]) -> str:
    """A plan as the menu names it: title, then what tells it from another
    with the same title (its validation, its files, the end of its id)."""
    count = len(plan["paths"])
    parts = [plan["source_validation"]] if plan["source_validation"] else []
    parts += [f"{count} file{'' if count == 1 else 's'}", f"#{plan['id'][-4:]}"]
    return f"plan “{plan['title']}” ({', '.join(parts)})"


def offered_for(titles: list[str], plan: dict[str, Any]) -> list[str]:
    """The verbs the menu offers for ``plan`` (Preview, Apply, Re-run, Cancel...)."""
    return [title.split(" ", 1)[0] for title in titles if name(plan) in title]


def test_fix_survives_unsaved_edits_elsewhere(demo_project: DemoProject, tmp_path: Path) -> None:
    inventory = demo_project.root / INVENTORY
    on_disk = inventory.read_text(encoding="utf-8")
    result = drive(demo_project, tmp_path, "fix")
    saved, line = result["saved"], result["import_line"]
    assert result["import_text"] == "import os", result
    assert result["run_ended"], "the save's run never reported its end"
    assert saved == on_disk.splitlines(), "the saved buffer is not the demo's file"

    # Unsaved: a comment above the import (it moves down one line), a line at the end.
    edited = [*saved[:line], "# an unsaved comment above the import", *saved[line:]]
    edited.append("# an unsaved line at the end")
    assert result["edited"] == edited and result["modified_before_fix"], result
    moved = result["moved_line"]
    assert moved == line + 1 and result["moved_text"] == "import os", result
    at_moved, sent = result["moved_actions"], result["moved_diagnostics"]
    assert result["diagnostic_moved"], "ruff's finding did not show on the import's new line"
    assert FIX in enabled(at_moved), (
        f"{FIX!r} not offered on the import's new line: {at_moved}; diagnostics there: {sent}"
    )
    assert any("`os` imported but unused" in m for m in sent), sent

    # Picked: exactly the import's line goes; the user's unsaved edits stay.
    assert result["fix_applied"], f"{FIX!r} never changed the buffer: {result['messages']}"
    assert result["after_fix"] == edited[:moved] + edited[moved + 1 :], result["after_fix"]
    assert result["after_undo"] == edited, result["after_undo"]

    # The import's own line changed (unsaved): the fix no longer fits it.
    assert result["changed_text"] == "import os  # changed, not saved", result
    assert any("`os` imported but unused" in m for m in result["changed_diagnostics"]), (
        "the request should carry ruff's finding on the changed line",
        result["changed_diagnostics"],
    )
    at_changed = result["changed_actions"]
    assert FIX not in enabled(at_changed), f"{FIX!r} offered on a changed line: {at_changed}"
    fixes = [action for action in at_changed if action["title"] == FIX]
    if result["disabled_support"]:  # shown greyed out, saying why
        assert len(fixes) == 1, at_changed
        assert "the line changed since ruff read it" in fixes[0]["disabled"], fixes
    else:  # Neovim 0.11: a disabled action would look pickable, so none is sent
        assert fixes == [], at_changed
    assert not result["changed_picked"] and result["changed_unchanged"], result
    # Nothing was saved after the first :write.
    assert inventory.read_text(encoding="utf-8") == on_disk


def test_plans_are_told_apart_and_current(demo_project: DemoProject, tmp_path: Path) -> None:
    root = demo_project.root
    create_plan(demo_project, diff_of(root, BARE, FIXED), SAME_TITLE)
    create_plan(demo_project, diff_of(root, FIXME, "    # FIXME: reject negatives.\n"), SAME_TITLE)
    propose_fix(demo_project)  # ruff's fix, as a plan: "Propose again" when it no longer fits
    plans = plan_list(demo_project)
    same = [plan for plan in plans if plan["title"] == SAME_TITLE]
    (fixed,) = (plan for plan in plans if plan["source_validation"] == "ruff")
    assert len(same) == 2 and len(plans) == 3, plans
    again = tmp_path / "again.diff"  # made while Neovim runs, on the saved text
    again.write_text(diff_of(root, BARE, FIXED), encoding="utf-8")
    result = drive(
        demo_project,
        tmp_path,
        "plans",
        ACP_PLAN_COUNT=str(len(plans)),
        ACP_PLAN_LINE=str(line_of(root, BARE)),
        ACP_PLAN_DIFF=str(again),
        ACP_PLAN_TITLE=SAME_TITLE,
    )

    # Fitting: each plan by a name of its own, the two "Same title" ones apart.
    fitting = result["fitting"]
    assert result["fitting_waited"], f"not every plan was offered for preview: {fitting}"
    assert name(same[0]) != name(same[1])
    for plan in same:
        assert f"Preview {name(plan)}" in fitting, (name(plan), fitting)
        assert f"Apply {name(plan)}" in fitting, (name(plan), fitting)
        assert offered_for(fitting, plan) == ["Preview", "Apply", "Re-run", "Cancel"], fitting
    assert f"Preview {name(fixed)}" in fitting, (name(fixed), fitting)
    previews = [title for title in fitting if title.startswith("Preview plan “Same title”")]
    assert len(previews) == len(set(previews)) == 2, previews

    # Saved after an edit: none of them fits; cancel, or propose ruff's fix again.
    stale = result["stale"]
    assert result["stale_waited"], f"a plan the saved file no longer fits is still offered: {stale}"
    for plan in plans:
        assert offered_for(stale, plan) == ["Cancel"] or (
            plan is fixed and sorted(offered_for(stale, plan)) == ["Cancel", "Propose"]
        ), (name(plan), stale)
    assert (
        stale.count(f"Propose again with ruff ({name(fixed)} no longer fits {INVENTORY})") == 1
    ), stale

    # A plan made on the saved text fits; the older ones with its title still do not.
    with_new = result["with_new"]
    assert result["new_waited"], f"the plan made on the saved text is not offered: {with_new}"
    (new,) = (plan for plan in plan_list(demo_project) if plan["id"] == result["new_id"])
    assert offered_for(with_new, new) == ["Preview", "Apply", "Re-run", "Cancel"], with_new
    for plan in same:
        assert offered_for(with_new, plan) == ["Cancel"], (name(plan), with_new)
    assert len({name(plan) for plan in [*same, new]}) == 3


def test_plan_applied_in_neovim_waits_for_the_save(
    demo_project: DemoProject, tmp_path: Path
) -> None:
    root = demo_project.root
    inventory = root / INVENTORY
    base = inventory.read_text(encoding="utf-8")
    title = "Catch Exception, not everything"
    plan_id = create_plan(demo_project, diff_of(root, BARE, FIXED), title)
    result = drive(
        demo_project,
        tmp_path,
        "apply",
        ACP_PLAN_ID=plan_id,
        ACP_PLAN_LINE=str(line_of(root, BARE)),
        ACP_PLAN_TITLE=title,
    )
    states = result["states"]
    changed = base.replace(BARE, FIXED).splitlines()
    assert result["base"] == base.splitlines()
    assert states["before"] == "complete", states

    # Picked in Neovim: in the buffer, unsaved; recorded as in the editor.
    assert result["first_title"].startswith(f"Apply plan “{title}”"), result
    assert result["first_buffer"] == changed and result["first_modified"], result
    assert "applied" not in states["after_apply"], f"applied before any save: {states}"
    assert result["in_editor_reached"], f"never in_editor after the apply: {states}"
    assert result["disk_after_apply"] == base.rstrip("\n"), "the apply wrote to disk"

    # Undone: the buffer holds the base again; the plan is back to complete.
    assert result["after_undo"] == base.splitlines(), result["after_undo"]
    assert not result["modified_after_undo"], result
    assert result["complete_reached"], f"not complete again after the undo: {states}"
    assert "applied" not in states["after_undo"], states

    # Applied again and saved: applied, and on disk.
    assert result["second_buffer"] == changed and result["second_modified"], result
    assert result["in_editor_again"], f"not in_editor after the second apply: {states}"
    assert result["applied_reached"], f"not applied after the save: {states}"
    assert states["after_save"][-1] == "applied", states
    assert result["disk_after_save"] == base.replace(BARE, FIXED).rstrip("\n")
    (plan,) = (plan for plan in plan_list(demo_project) if plan["id"] == plan_id)
    assert plan["state"] == "applied", plan
    assert inventory.read_text(encoding="utf-8") == base.replace(BARE, FIXED)
