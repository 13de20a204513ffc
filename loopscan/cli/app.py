"""The `loopscan` command line: a thin layer that builds library objects from arguments."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from loopscan import __version__
from loopscan.cli import env
from loopscan.cli.options import with_detector_options
from loopscan.cli.output import Output
from loopscan.cli.status import ExitStatus
from loopscan.engine.config import ConfigRequest

app = typer.Typer(
    name="loopscan",
    help="Offline forensics of AI-agent session transcripts: where a session looped, what it cost, "
    "and which loop-detector config would have stopped it.",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

class Format(str, Enum):
    table = "table"
    json = "json"


class FailOn(str, Enum):
    warning = "warning"
    critical = "critical"
    never = "never"


def _version(value: bool) -> None:
    if value:
        from loopscan.readers.source import ijson_backend
        import msgspec
        import orjson

        env.ENV.stdout.write(
            f"loopscan {__version__} (python {sys.version.split()[0]}; orjson {orjson.__version__}, "
            f"msgspec {msgspec.__version__}, ijson backend {ijson_backend()})\n"
        )
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[
        Optional[bool],
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and parser backends."),
    ] = None,
) -> None:
    """loopscan: find doom loops in agent transcripts."""


PathsArg = Annotated[list[str], typer.Argument(help="Session files (.jsonl, .jsonl.gz, archived), folders, or - for stdin.")]
FormatOpt = Annotated[
    Optional[Format], typer.Option("--format", "-f", help="Report format (default: table on a terminal, else json).")
]
OutputOpt = Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the report to this file.")]
FailOnOpt = Annotated[
    FailOn, typer.Option("--fail-on", help="Exit 1 when a session reaches this level (warning|critical|never).")
]
TraceOpt = Annotated[bool, typer.Option("--trace", help="Add every call's hashes and decision (JSON `calls`).")]


@app.command()
@with_detector_options
def analyze(
    paths: PathsArg,
    format: FormatOpt = None,
    output: OutputOpt = None,
    fail_on: FailOnOpt = FailOn.critical,
    trace: TraceOpt = False,
    request: ConfigRequest = None,  # type: ignore[assignment]  # built from the detector options
) -> None:
    """One session, in depth: tokens, failures, repeated commands, and where the detector fires."""
    from loopscan.analysis.session import analyze_path
    from loopscan.readers import ReadError

    out = Output(env.ENV, format.value if format else None, output)
    results, errors = [], 0
    sessions = _expand(paths, out)
    for path in sessions:
        try:
            result = analyze_path(path, request, trace=trace)
        except ReadError as exc:
            out.error(str(exc))
            errors += 1
            continue
        out.notes(result.diagnostics)
        results.append(result)
    if not results:
        out.error("nothing could be read")
        raise typer.Exit(ExitStatus.ERROR)
    out.sessions(results, as_list=len(paths) > 1 or len(sessions) > 1)
    raise typer.Exit(_status(results, fail_on))


def _status(results: list, fail_on: FailOn) -> ExitStatus:
    if fail_on is FailOn.never:
        return ExitStatus.OK
    for result in results:
        if result.block is not None:
            return ExitStatus.FAIL_LEVEL
        if fail_on is FailOn.warning and result.firings:
            return ExitStatus.FAIL_LEVEL
    return ExitStatus.OK


def _expand(paths: list[str], out: Output) -> list[str]:
    from loopscan.discovery import expand

    found, problems = expand(paths)
    for problem in problems:
        out.error(problem)
    return found


def main() -> None:
    app()
