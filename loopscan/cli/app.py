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
ArchivedOpt = Annotated[bool, typer.Option("--include-archived", help="Also *.jsonl.reset.* and *.jsonl.deleted.* transcripts.")]
JobsOpt = Annotated[Optional[int], typer.Option("--jobs", "-j", min=1, help="Worker processes (default: all cores).")]
SessionsArg = Annotated[Optional[list[str]], typer.Argument(
    help="Session files, folders or globs (default: $OPENCLAW_STATE_DIR or ~/.openclaw agents/*/sessions).")]


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
    results = []
    sessions = _discover(paths, False, out)
    for path in sessions:
        try:
            result = analyze_path(path, request, trace=trace)
        except ReadError as exc:
            out.error(str(exc))
            continue
        out.notes(result.diagnostics, redact)
        results.append(result)
    if not results:
        out.error("nothing could be read")
        raise typer.Exit(ExitStatus.ERROR)
    out.sessions(results, as_list=len(paths) > 1 or len(sessions) > 1, redact=redact)
    raise typer.Exit(_status(results, fail_on))


class AuditFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    csv = "csv"
    parquet = "parquet"


@app.command()
@with_detector_options
def audit(
    paths: SessionsArg = None,
    since: Annotated[Optional[str], typer.Option("--since", help="Sessions started at or after (YYYY-MM-DD, YYYYMMDD or a date-time).")] = None,
    until: Annotated[Optional[str], typer.Option("--until", help="Sessions started before (same forms; a date means its midnight).")] = None,
    timezone_: Annotated[Optional[str], typer.Option("--timezone", help="Time zone of --since/--until without one (IANA name; default: local).")] = None,
    include_archived: ArchivedOpt = False,
    jobs: JobsOpt = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when any input could not be read.")] = False,
    format: Annotated[Optional[AuditFormat], typer.Option("--format", "-f", help="table (default on a terminal), json (default otherwise), markdown, csv, parquet.")] = None,
    output: OutputOpt = None,
    fail_on: FailOnOpt = FailOn.critical,
    redact: RedactOpt = True,
    request: ConfigRequest = None,  # type: ignore[assignment]  # built from the detector options
) -> None:
    """A night's sessions at once: replay each, rank by waste, exit non-zero when any would be blocked."""
    from loopscan.analysis.audit import Window, rank, run_audit, totals
    from loopscan.cli.dates import parse_bound
    from loopscan.reports import audit as audit_report
    from loopscan.reports import json_report

    e = env.ENV
    out = _output(format, output)
    try:
        window = Window(parse_bound(since, timezone_), parse_bound(until, timezone_))
    except ValueError as exc:
        out.error(str(exc))
        raise typer.Exit(ExitStatus.ERROR) from None
    sessions = _discover(paths, include_archived, out)
    with out.progress(sessions) as advance:
        rows = rank(list(run_audit(sessions, request, jobs or os.cpu_count() or 1, window, advance)))
    for row in rows:
        if row["error"]:
            out.error(row["error"])
    doc = audit_report.document(rows, totals(rows), request.resolve().to_json(), redact)
    if out.format == "json":
        out.write(json_report.dumps(doc))
    elif out.format == "markdown":
        out.write(audit_report.render_markdown(doc))
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


class WhatifFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    csv = "csv"
    parquet = "parquet"
    html = "html"


_RANGE = "START:END[:STEP] (inclusive), A,B,C, or one value"


@app.command()
def whatif(
    paths: SessionsArg = None,
    baseline: Annotated[Optional[list[str]], typer.Option("--baseline", help="Sessions known to be healthy (repeatable; files, folders, globs).")] = None,
    recommend: Annotated[bool, typer.Option("--recommend", help="Print the config that saves the most tokens while blocking no baseline session.")] = False,
    warning: Annotated[Optional[str], typer.Option("--warning", metavar="RANGE", help=f"warningThreshold values to try: {_RANGE}")] = None,
    critical: Annotated[Optional[str], typer.Option("--critical", metavar="RANGE", help="criticalThreshold values to try")] = None,
    global_: Annotated[Optional[str], typer.Option("--global", metavar="RANGE", help="globalCircuitBreakerThreshold values to try")] = None,
    unknown: Annotated[Optional[str], typer.Option("--unknown", metavar="RANGE", help="unknownToolThreshold values to try")] = None,
    history: Annotated[Optional[str], typer.Option("--history", metavar="RANGE", help="historySize values to try")] = None,
    session_warning: Annotated[Optional[str], typer.Option("--session-warning", metavar="RANGE", help="session_no_progress warning values to try")] = None,
    session_critical: Annotated[Optional[str], typer.Option("--session-critical", metavar="RANGE", help="session_no_progress critical values to try")] = None,
    session_window: Annotated[Optional[str], typer.Option("--session-window", metavar="RANGE", help="session_no_progress window values to try")] = None,
    token_budget: Annotated[Optional[str], typer.Option("--token-budget", metavar="RANGE", help="token_budget values to try (session tokens)")] = None,
    max_iterations: Annotated[Optional[str], typer.Option("--max-iterations", metavar="RANGE", help="iteration_budget values to try (tool rounds a run)")] = None,
    profile: Annotated[str, typer.Option("--profile", help="Comma list of profiles to compare side by side.")] = "openclaw-2026.6",
    detectors: Annotated[Optional[list[str]], typer.Option("--detectors", help="A detector-switch variant (repeatable): comma list of the detectors kept on, or all / none.")] = None,
    config: Annotated[Optional[Path], typer.Option("--config", help="openclaw.json whose values are the base of axes not given.")] = None,
    agent: Annotated[Optional[str], typer.Option("--agent", help="Agent id whose per-agent override is the base.")] = None,
    include_archived: ArchivedOpt = False,
    jobs: JobsOpt = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Rows shown in the table.")] = 25,
    format: Annotated[Optional[WhatifFormat], typer.Option("--format", "-f", help="table (default on a terminal), json (default otherwise), markdown, csv, parquet, html.")] = None,
    output: OutputOpt = None,
) -> None:
    """Threshold what-if tuning over many sessions, with a recommended openclaw.json snippet."""
    from loopscan.analysis import whatif as wi
    from loopscan.cli.options import build_request, parse_detector_variant
    from loopscan.discovery import unique
    from loopscan.reports import json_report
    from loopscan.reports import whatif as report

    out = _output(format, output)
    try:
        profiles = [p.strip() for p in profile.split(",") if p.strip()]
        request = build_request(config=config, agent=agent, profile=profiles[0] if profiles else "", as_configured=False,
                                detectors=None, no_detector=None)
        axes = wi.GridAxes(
            warning=_values(warning),
            critical=_values(critical),
            global_=_values(global_),
            unknown=_values(unknown),
            history=_values(history),
            session_warning=_values(session_warning),
            session_critical=_values(session_critical),
            session_window=_values(session_window),
            token_budget=_values(token_budget),
            max_iterations=_values(max_iterations),
            profiles=profiles,
            detector_sets=[parse_detector_variant(v) for v in detectors] if detectors else None,
        )
        grid = wi.build_grid(axes, request)
    except ValueError as exc:
        out.error(str(exc))
        raise typer.Exit(ExitStatus.ERROR) from None
    sessions = _discover(paths, include_archived, out)
    healthy = _discover(baseline, include_archived, out) if baseline else []
    todo = unique(sessions + healthy)
    variants = sorted({g.variant() for g in grid})
    with out.progress(todo) as advance:
        observed = wi.observe_all(todo, request, variants, jobs or wi.default_jobs(), advance)
    errors = [o["error"] for o in observed if o["error"]]
    for error in errors:
        out.error(error)
    if len(errors) == len(observed):
        raise typer.Exit(ExitStatus.ERROR)
    rows = wi.rank_rows(wi.evaluate(grid, observed, {os.path.realpath(p) for p in healthy}))
    doc = report.document(rows, wi.recommend(rows) if recommend else None, len(observed) - len(errors),
                          len({os.path.realpath(p) for p in healthy}), errors)
    if out.format == "json":
        out.write(json_report.dumps(doc))
    elif out.format == "markdown":
        out.write(report.render_markdown(doc, top))
    elif out.format in ("csv", "parquet"):
        out.write_frame(doc, report.write_frame)
    elif out.format == "html":
        out.write(report.render_html(doc))
    else:
        out.write(lambda console: report.render_table(doc, console, top))
    raise typer.Exit(ExitStatus.OK)


def _values(text: Optional[str]) -> Optional[list[int]]:
    from loopscan.analysis.whatif import parse_values

    return parse_values(text) if text else None


def _output(format: Optional[Enum], output: Optional[Path]) -> Output:
    out = Output(env.ENV, format.value if format else None, output)
    if out.format == "parquet" and output is None:
        out.error("--format parquet needs --output FILE")
        raise typer.Exit(ExitStatus.ERROR)
    return out


def _discover(paths: Optional[list[str]], include_archived: bool, out: Output) -> list[str]:
    """Session files from paths (default: the OpenClaw state dir); exits 2 when there are none."""
    from loopscan.discovery import default_roots, expand

    roots = paths or default_roots(env.ENV.environ, env.ENV.home)
    if not roots:
        out.error("no session folders found (give paths, or set OPENCLAW_STATE_DIR)")
        raise typer.Exit(ExitStatus.ERROR)
    sessions, problems = expand(roots, include_archived)
    for problem in problems:
        out.error(problem)
    if not sessions:
        out.error("no sessions found")
        raise typer.Exit(ExitStatus.ERROR)
    return sessions


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



def main() -> None:
    app()
