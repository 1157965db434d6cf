"""Parse trees: one parse per file content, incremental after an edit (and the
same tree as from scratch), bounded by the source they hold."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from acp_backend.inspect import service
from acp_backend.inspect.languages import LANGUAGES
from acp_backend.inspect.service import InspectedFile, InspectService
from acp_backend.inspect.source import from_text
from acp_backend.inspect.syntax import RETIRED_MAX, Parsed, Trees, edit_between, encoded
from acp_client.models import Resource

RESOURCE = Resource(id="R", name="r", root="/r", created_at=datetime(2026, 1, 1, tzinfo=UTC))
PYTHON = LANGUAGES["python"]


async def test_hovering_down_an_unchanged_file_parses_it_once() -> None:
    inspector = InspectService(None)  # type: ignore[arg-type]
    target = InspectedFile(RESOURCE, "m.py", "/r/m.py")
    text = "def f():\n    pass\n\n\ndef g():\n    pass\n"
    trees = []
    for line in (0, 1, 4, 5):
        found, parsed, note = await inspector.entity(target, from_text(text), PYTHON, line)
        assert found is not None and parsed is not None and note is None
        trees.append(parsed)
    assert all(parsed is trees[0] for parsed in trees) and not trees[0].incremental
    _, edited, _ = await inspector.entity(target, from_text(text + "# edited\n"), PYTHON, 0)
    assert edited is not None and edited is not trees[0] and edited.incremental


def test_an_incremental_parse_is_the_parse_from_scratch() -> None:
    rng = random.Random(7)
    text = "".join(
        f"def f{n}(a, b=1):\n    '''Doc {n}.'''\n    return [a, b, {n}]\n\n" for n in range(50)
    )
    trees = Trees()
    trees.parse("m.py", "0", PYTHON, text)
    for step in range(40):
        at = rng.randrange(len(text))
        cut = rng.randrange(0, 12)
        insert = rng.choice(["", "x", "\n", "    pass\n", "(", "def g():\n", "é👋"])
        text = text[:at] + insert + text[at + cut :]
        incremental = trees.parse("m.py", str(step + 1), PYTHON, text)
        scratch = Trees().parse("m.py", "s", PYTHON, text)
        assert incremental.incremental and not scratch.incremental
        assert str(incremental.tree.root_node) == str(scratch.tree.root_node), step


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"", b"abc"),
        (b"abc", b""),
        (b"abc", b"abc"),
        (b"abXc", b"abc"),
        (b"ab\ncd\nef", b"ab\ncZZd\nef"),
        (b"a" * 10_000, b"a" * 5_000 + b"b" + b"a" * 5_000),
        (b"x" * 9_000 + b"\n" * 3, b"x" * 9_000 + b"\n" * 4),
    ],
)
def test_the_edit_between_two_texts(old: bytes, new: bytes) -> None:
    edit = edit_between(old, new)
    assert old[: edit.start_byte] == new[: edit.start_byte]
    assert old[edit.old_end_byte :] == new[edit.new_end_byte :]
    assert edit.start_byte <= edit.old_end_byte and edit.start_byte <= edit.new_end_byte
    assert edit.new_end_point.row == new[: edit.new_end_byte].count(b"\n")


def test_the_cache_holds_at_most_its_budget_of_source() -> None:
    trees = Trees(budget=100)
    for n in range(10):
        trees.parse(f"m{n}.py", str(n), PYTHON, f"x = {n}\n" + "#" * 30 + "\n")
    assert len(trees) == 2
    trees.parse("big.py", "b", PYTHON, "#" * 200)  # too big to keep at all
    assert len(trees) == 2


def test_pushed_out_trees_are_freed_later_and_never_pile_up() -> None:
    """A parse does not pay for freeing the trees it pushes out (ms on a big
    file): they wait, a bounded few, for ``free_retired``."""
    trees = Trees(budget=100)
    for n in range(3):
        trees.parse(f"m{n}.py", str(n), PYTHON, f"x = {n}\n" + "#" * 30 + "\n")
    assert (len(trees), trees.retired) == (2, 1)
    trees.parse("m2.py", "new", PYTHON, "x = 3\n")  # its own file's older tree too
    assert trees.retired == 2
    trees.free_retired()
    assert (len(trees), trees.retired) == (2, 0)
    for n in range(3 * RETIRED_MAX):
        trees.parse(f"n{n}.py", str(n), PYTHON, f"y = {n}\n" + "#" * 30 + "\n")
    assert trees.retired == RETIRED_MAX


@pytest.mark.parametrize("seed", range(6))
def test_the_line_index_finds_every_line(seed: int) -> None:
    rng = random.Random(seed)
    pieces = ["", "a", "é", "x" * 70, "y" * 5000, "\r"]  # a line longer than an index block, too
    data = b"\n".join(
        rng.choice(pieces).encode() for _ in range(rng.choice([0, 1, 3, 2000]))
    ) + rng.choice([b"", b"\n", b"\n\n"])
    parsed = Parsed(PYTHON, data, Trees().parse("m.py", "x", PYTHON, "").tree)
    starts = [0] + [at + 1 for at, byte in enumerate(data) if byte == ord("\n")]
    assert parsed.lines == len(starts)
    for row in range(len(starts) + 2):
        assert parsed.line_start(row) == (starts[row] if row < len(starts) else len(data))
    assert [parsed.line(row) for row in range(len(starts))] == [
        line.rstrip(b"\r") for line in data.split(b"\n")
    ]


def test_a_lone_carriage_return_is_a_line_break_as_the_contract_counts() -> None:
    text = "def f():\r    pass\rdef g():\r\n    pass\r\n"
    assert len(encoded(text)) == len(text.encode())
    parsed = Trees().parse("m.py", "x", PYTHON, text)
    assert isinstance(parsed, Parsed)
    assert [parsed.line(n) for n in range(4)] == [
        b"def f():",
        b"    pass",
        b"def g():",
        b"    pass",
    ]


async def test_a_parse_over_the_time_limit_answers_without_an_entity(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(service, "PARSE_TIME_LIMIT", 0.0)
    monkeypatch.setattr(service, "INLINE_TEXT", 10)
    inspector = InspectService(None)  # type: ignore[arg-type]
    target = InspectedFile(RESOURCE, "m.py", "/r/m.py")
    text = "def f():\n" + "    pass\n" * 4000  # one block, too long for an excerpt
    found, parsed, note = await inspector.entity(target, from_text(text), PYTHON, 1)
    assert (found, parsed) == (None, None)
    assert note == "m.py was not outlined: parsing took over 0 s"
