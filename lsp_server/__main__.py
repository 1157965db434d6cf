"""``acp-lsp``: the language server (stdio by default), and ``acp-lsp check``.

Nothing but the protocol ever goes to stdout: logs go to stderr or
``--log-file``, and stray writes to ``sys.stdout`` are sent to stderr.

The arguments are parsed before the server is imported: ``--help``,
``--version`` and a usage error never pay for pygls (ADR 0015), nor, for
``check``, for pydantic. The server answers ``initialize`` before its
features and the ACP client load (ADR 0016).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from acp_client import heap, threads
from acp_client.head_start import head_start
from lsp_server import __version__
from lsp_server.options import add_target_options, check_parser


def host_port(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host, int(port)


def server_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-lsp",
        description="Language server presenting an ACP (CleverAgents Agent Client Protocol) "
        "backend. `acp-lsp check --help` for the command-line check.",
    )
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="speak LSP on stdio (default)")
    transport.add_argument("--tcp", type=host_port, metavar="HOST:PORT", help="listen on TCP")
    transport.add_argument("--ws", type=host_port, metavar="HOST:PORT", help="listen on WebSocket")
    add_target_options(parser)
    parser.add_argument("--log-file", type=Path, help="write the log here instead of stderr")
    parser.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    parser.add_argument("--version", action="version", version=f"acp-lsp {__version__}")
    return parser


def setup_logging(level: str, log_file: Path | None) -> None:
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8")
        if log_file
        else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)


def check(argv: Sequence[str]) -> int:
    """``acp-lsp check``: the arguments parsed and, for a run in local mode,
    the backend's parse server started (ADR 0031, 0038) as the check loads,
    with the collector paused for both."""
    args = check_parser().parse_args(argv)
    with heap.loading():
        if not args.no_run:
            head_start(args.acp, args.data_dir, args.facade)
        from lsp_server.cli_check import main as check_main
    return check_main(argv)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["check"]:
        return check(arguments[1:])
    args = server_parser().parse_args(arguments)
    setup_logging(args.log_level, args.log_file)
    with heap.loading():
        from lsp_server.backend import BackendAddress
        from lsp_server.handlers import register
        from lsp_server.server import AcpLanguageServer
        from lsp_server.stdio import PipeStdout, SignalledStdin

        server = AcpLanguageServer(BackendAddress.from_args(args))
        register(server)
    threads.quick_handoffs()
    if args.tcp:
        server.start_tcp(*args.tcp)
    elif args.ws:
        server.start_ws(*args.ws)
    else:
        stdout = server.output = PipeStdout(sys.stdout.buffer)
        sys.stdout = sys.stderr  # the protocol owns the real stdout
        stdin = SignalledStdin(sys.stdin.buffer) if os.name == "posix" else None
        if stdin is not None:
            stdin.install()  # SIGTERM/SIGHUP: end as if the editor closed the pipe
        server.start_io(stdin or sys.stdin.buffer, stdout)  # type: ignore[arg-type]
        if stdin is not None and stdin.signum is not None:
            return 128 + stdin.signum
    return 0


def entry() -> None:
    """The ``acp-lsp`` command. ``check`` ends without tearing the
    interpreter down, as mypy does: freeing pydantic's schemas and the
    backend's modules one object at a time took ~60 ms after everything had
    been written and closed (ADR 0031)."""
    code = main()
    if sys.argv[1:2] == ["check"]:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
