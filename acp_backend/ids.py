"""ULIDs: 26-character, time-ordered, URL-safe ids (https://github.com/ulid/spec).

Within one process ids are strictly increasing, even within a millisecond
(the random part is incremented), so ordering by id is ordering by creation:
result cursors rely on that.
"""

from __future__ import annotations

import re
import secrets
import threading
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base32
_RANDOM_BITS = 80
_RANDOM_MAX = (1 << _RANDOM_BITS) - 1
_ULID = re.compile(r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")

_lock = threading.Lock()
_last_ms = -1
_last_random = 0


def new_ulid() -> str:
    """A fresh ULID, greater than every one this process made before."""
    global _last_ms, _last_random  # noqa: PLW0603 - the monotonic state is process-wide by design
    with _lock:
        now_ms = time.time_ns() // 1_000_000
        if now_ms > _last_ms:
            _last_ms, _last_random = now_ms, secrets.randbits(_RANDOM_BITS)
        elif _last_random < _RANDOM_MAX:
            _last_random += 1  # same (or an earlier, clock went back) millisecond
        else:  # 2**80 ids in one millisecond: borrow the next one
            _last_ms, _last_random = _last_ms + 1, 0
        value = (_last_ms << _RANDOM_BITS) | _last_random
    return "".join(_ALPHABET[(value >> shift) & 31] for shift in range(125, -1, -5))


def is_ulid(text: str) -> bool:
    """True for a well-formed ULID (upper-case canonical form)."""
    return bool(_ULID.match(text))
