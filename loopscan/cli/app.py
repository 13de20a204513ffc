"""The `loopscan` command line: a thin layer that builds library objects from arguments."""

from __future__ import annotations

import os
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
    markdown = "markdown"
    html = "html"


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
    Optional[Format],
    typer.Option("--format", "-f", help="Report format: table (default on a terminal), json (default otherwise), markdown, html."),
]
OutputOpt = Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the report to this file.")]
FailOnOpt = Annotated[
    FailOn, typer.Option("--fail-on", help="Exit 1 when a session reaches this level (warning|critical|never).")
]
TraceOpt = Annotated[bool, typer.Option("--trace", help="Add every call's hashes and decision (JSON `calls`).")]
RedactOpt = Annotated[bool, typer.Option("--redact/--no-redact", help="Redact secrets (API keys, tokens, passwords) in every format.")]


@app.command()
@with_detector_options
def analyze(
    paths: PathsArg,
    format: FormatOpt = None,
    output: OutputOpt = None,
    fail_on: FailOnOpt = FailOn.critical,
    trace: TraceOpt = False,
    redact: RedactOpt = True,
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
    out.sessions(results, as_list=len(paths) > 1 or len(sessions) > 1, redact=redact)
    raise typer.Exit(_status(results, fail_on))


class AuditFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    parquet = "parquet"


@app.command()
@with_detector_options
def audit(
    paths: Annotated[Optional[list[str]], typer.Argument(
        help="Session files, folders or globs (default: $OPENCLAW_STATE_DIR or ~/.openclaw agents/*/sessions).")] = None,
    since: Annotated[Optional[str], typer.Option("--since", help="Sessions started at or after (YYYY-MM-DD, YYYYMMDD or a date-time).")] = None,
    until: Annotated[Optional[str], typer.Option("--until", help="Sessions started before (same forms; a date means its midnight).")] = None,
    timezone_: Annotated[Optional[str], typer.Option("--timezone", help="Time zone of --since/--until without one (IANA name; default: local).")] = None,
    include_archived: Annotated[bool, typer.Option("--include-archived", help="Also audit *.jsonl.reset.* and *.jsonl.deleted.* transcripts.")] = False,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", min=1, help="Worker processes (default: all cores).")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when any input could not be read.")] = False,
    format: Annotated[Optional[AuditFormat], typer.Option("--format", "-f", help="table (default on a terminal), json (default otherwise), csv, parquet.")] = None,
    output: OutputOpt = None,
    fail_on: FailOnOpt = FailOn.critical,
    redact: RedactOpt = True,
    request: ConfigRequest = None,  # type: ignore[assignment]  # built from the detector options
) -> None:
    """A night's sessions at once: replay each, rank by waste, exit non-zero when any would be blocked."""
    from loopscan.analysis.audit import Window, rank, run_audit, totals
    from loopscan.cli.dates import parse_bound
    from loopscan.discovery import default_roots, expand
    from loopscan.reports import audit as audit_report
    from loopscan.reports import json_report

    e = env.ENV
    out = Output(e, format.value if format else None, output)
    if out.format == "parquet" and output is None:
        out.error("--format parquet needs --output FILE")
        raise typer.Exit(ExitStatus.ERROR)
    try:
        window = Window(parse_bound(since, timezone_), parse_bound(until, timezone_))
    except ValueError as exc:
        out.error(str(exc))
        raise typer.Exit(ExitStatus.ERROR) from None
    roots = paths or default_roots(e.environ, e.home)
    if not roots:
        out.error("no session folders found (give paths, or set OPENCLAW_STATE_DIR)")
        raise typer.Exit(ExitStatus.ERROR)
    sessions, problems = expand(roots, include_archived)
    for problem in problems:
        out.error(problem)
    if not sessions:
        out.error("no sessions to audit")
        raise typer.Exit(ExitStatus.ERROR)
    with out.progress(len(sessions)) as advance:
        rows = rank(list(run_audit(sessions, request, jobs or os.cpu_count() or 1, window, advance)))
    for row in rows:
        if row["error"]:
            out.error(row["error"])
    doc = audit_report.document(rows, totals(rows), request.resolve().to_json(), redact)
    if out.format == "json":
        out.write(json_report.dumps(doc))
    elif out.format in ("csv", "parquet"):
        out.write_frame(doc, audit_report.write_frame)
    else:
        out.write(lambda console: audit_report.render_table(doc, console))
    if rows and all(r["error"] for r in rows):
        raise typer.Exit(ExitStatus.ERROR)
    status = _status_rows(rows, fail_on)
    if strict and any(r["error"] for r in rows):
        status = max(status, ExitStatus.FAIL_LEVEL)
    raise typer.Exit(status)


def _status_rows(rows: list[dict], fail_on: FailOn) -> ExitStatus:
    if fail_on is FailOn.never:
        return ExitStatus.OK
    hit = any(r["block"] for r in rows) or (fail_on is FailOn.warning and any(r["first_warning"] for r in rows))
    return ExitStatus.FAIL_LEVEL if hit else ExitStatus.OK


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
