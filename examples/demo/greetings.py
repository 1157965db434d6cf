"""Greetings in several languages; the non-ASCII text exercises position conversion."""


def greet(name: str) -> str:
    banner = "👋 你好, world 🌍"; return f"{banner} {nmae}"


def farewell(name: str) -> str:
    note = "さようなら 🙂"  # TODO: pick the farewell from the user's locale
    return f"{note}, {name}"
