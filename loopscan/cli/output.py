"""Where a command's report and diagnostics go: report to stdout (or --output), the rest to stderr."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from loopscan.cli.env import Environment
from loopscan.readers import Diagnostics


class Output:
    def __init__(self, env: Environment, fmt: str | None, output: Path | None):
        self.env = env
        self.output = output
        self.format = fmt or ("table" if env.stdout_isatty and output is None else "json")
        self.err = Console(file=env.stderr, no_color=env.no_color, highlight=False, soft_wrap=True)

    def error(self, message: str) -> None:
        self.err.print(f"loopscan: {message}", markup=False, style="red")

    def notes(self, diag: Diagnostics) -> None:
        for note in diag.notes:
            self.err.print(f"loopscan: {note}", markup=False, style="yellow")
        if diag.dropped_notes:
            self.err.print(f"loopscan: {diag.path}: … {diag.dropped_notes} more notes", markup=False, style="yellow")

    def console(self, file: Any) -> Console:
        tty = file is self.env.stdout and self.env.stdout_isatty
        return Console(file=file, no_color=self.env.no_color or not tty, highlight=False,
                       force_terminal=tty, width=None if tty else 120, soft_wrap=False)

    def write(self, render: Any) -> None:
        """`render(console)` for tables, or a str document."""
        if self.output is not None:
            with open(self.output, "w", encoding="utf-8") as fh:
                self._emit(render, fh)
        else:
            self._emit(render, self.env.stdout)

    def _emit(self, render: Any, fh: Any) -> None:
        if isinstance(render, str):
            fh.write(render)
        else:
            render(self.console(fh))

    def sessions(self, results: list, as_list: bool) -> None:
        from loopscan.reports import json_report, table

        if self.format == "json":
            docs = [r.to_json() for r in results]
            self.write(json_report.dumps(docs if as_list else docs[0]))
        else:
            def render(console: Console) -> None:
                for result in results:
                    table.render(result, console)
            self.write(render)
