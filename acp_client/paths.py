"""Path and URI normalisation: the one function both sides use.

The backend registers roots with ``normalize_path`` and looks paths up with
it; the language server turns document URIs into paths with it. Using one
function on both sides is what makes prefix comparisons trustworthy.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

CONFIG_FILE = "acp.toml"
"""Where a resource declares its validations: this file at its root."""

_WINDOWS_DRIVE = re.compile(r"^/?([A-Za-z]):(?:[\\/]|$)")


class NotAFilePath(ValueError):
    """The input is a URI of another scheme (``untitled:``, ``vscode-notebook-cell:``)."""


def normalize_path(path_or_uri: str) -> str:
    """An absolute, ``..``-free, forward-slash path for a path or ``file:`` URI.

    - ``file:`` URIs are percent-decoded (``file:///a%20b`` -> ``/a b``);
    - Windows paths get forward slashes and a lower-case drive letter
      (``C:\\Src\\x`` and ``file:///c%3A/Src/x`` both -> ``c:/Src/x``);
    - other URI schemes raise ``NotAFilePath``.

    Symlinks are not resolved here (that needs the file system: see
    ``real_path``).
    """
    text = path_or_uri
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]+:", text) and not _WINDOWS_DRIVE.match(text):
        parts = urlsplit(text)
        if parts.scheme.lower() != "file":
            raise NotAFilePath(f"not a file URI: {text!r}")
        text = unquote(parts.path)
        if parts.netloc and parts.netloc.lower() != "localhost":
            text = f"//{parts.netloc}{text}"  # UNC share
    drive = _WINDOWS_DRIVE.match(text)
    if drive:
        rest = text[drive.end() :].replace("\\", "/")
        return f"{drive.group(1).lower()}:" + posixpath.normpath("/" + rest)
    if not text.startswith("/"):
        text = os.path.abspath(text)
    if text.startswith("//"):  # keep a UNC prefix, normalise the rest
        return "/" + posixpath.normpath(text[1:])
    return posixpath.normpath(text)


def real_path(path_or_uri: str) -> str:
    """``normalize_path`` with symlinks resolved (on this machine's file system)."""
    normalized = normalize_path(path_or_uri)
    if _WINDOWS_DRIVE.match(normalized) and os.sep == "/":
        return normalized  # a Windows path seen from POSIX: nothing to resolve
    return normalize_path(os.path.realpath(normalized))


def is_within(path: str, root: str) -> bool:
    """True when normalised ``path`` is ``root`` or lies below it."""
    if path == root:
        return True
    prefix = root if root.endswith("/") else root + "/"
    return path.startswith(prefix)


def relative_to(path: str, root: str) -> str:
    """POSIX path of ``path`` relative to ``root``; ``ValueError`` if outside."""
    if not is_within(path, root):
        raise ValueError(f"{path} is not under {root}")
    return "." if path == root else path[len(root.rstrip("/")) + 1 :]


def path_to_uri(path: str) -> str:
    """A ``file:`` URI for a normalised path, encoded the way VS Code does
    (``c:/x`` -> ``file:///c%3A/x``)."""
    if _WINDOWS_DRIVE.match(path):
        return f"file:///{path[0]}%3A{quote(path[2:], safe='/')}"
    return "file://" + quote(path, safe="/")


def default_data_dir() -> Path:
    """``$ACP_DATA_DIR``, else ``$XDG_DATA_HOME/acp-lsp``, else ``~/.local/share/acp-lsp``."""
    explicit = os.environ.get("ACP_DATA_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "acp-lsp"
