"""``acp-backend serve`` in a subprocess, and free ports on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

START_WAIT = 10.0


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class ServerProcess:
    """``acp-backend serve`` on 127.0.0.1 at a fixed port, restartable; its
    token is written to ``token_file`` as an operator would."""

    data_dir: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token_file(self) -> Path:
        return self.data_dir.parent / "token"

    def start(self) -> None:
        backend_file = self.data_dir / "backend.json"
        backend_file.unlink(missing_ok=True)
        command = [sys.executable, "-m", "acp_backend.cli", "--data-dir", str(self.data_dir)]
        self.process = subprocess.Popen(
            [*command, "serve", "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_WAIT
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                info = json.loads(backend_file.read_text())
                self.token_file.write_text(info["token"] + "\n")
                return
            time.sleep(0.05)
        raise RuntimeError("acp-backend serve did not write backend.json")

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.kill()
            self.process = None
