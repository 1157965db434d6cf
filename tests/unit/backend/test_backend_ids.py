from __future__ import annotations

import time

from acp_backend.ids import is_ulid, new_ulid


def test_ulids_are_well_formed_and_strictly_increasing() -> None:
    ids = [new_ulid() for _ in range(5000)]  # many share a millisecond
    assert all(is_ulid(value) and len(value) == 26 for value in ids)
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_ulid_time_prefix_tracks_the_clock() -> None:
    before = new_ulid()
    time.sleep(0.002)
    after = new_ulid()
    assert before[:10] < after[:10]


def test_is_ulid_rejects_other_strings() -> None:
    for text in ("", "not-a-ulid", "8" + "0" * 25, "0" * 25, "01ARZ3NDEKTSV4RRFFQ69G5FAi"):
        assert not is_ulid(text)
