"""Where a command's report and diagnostics go: report to stdout (or --output), the rest to stderr."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console

from loopscan.cli.env import Environment
from loopscan.discovery import file_size
from loopscan.readers import Diagnostics


class Output:
    def __init__(self, env: Environment, fmt: str | None, output: Path | None):
        self.env = env
        self.output = output
        self.format = fmt or ("table" if env.stdout_isatty and output is None else "json")
        self.err = Console(file=env.stderr, no_color=env.no_color, highlight=False, soft_wrap=True)

    def error(self, message: str) -> None:
        self.err.print(f"loopscan: {message}", markup=False, style="red")

    def notes(self, diag: Diagnostics, redact: bool = True) -> None:
        """The reader's notes (file:line: what was skipped or repaired); they can quote a bad line."""
        from loopscan.reports.redact import redact_text

        for note in diag.notes:
            self.err.print(f"loopscan: {redact_text(note) if redact else note}", markup=False, style="yellow")
        if diag.dropped_notes:
            self.err.print(f"loopscan: {diag.path}: … {diag.dropped_notes} more notes", markup=False, style="yellow")

    def console(self, file: Any) -> Console:
        tty = file is self.env.stdout and self.env.stdout_isatty
        return Console(file=file, no_color=self.env.no_color or not tty, highlight=False,
                       force_terminal=tty, width=None if tty else 200, soft_wrap=False)

    def write(self, render: Any) -> None:
        """`render(console)` for tables, or a document as str or (UTF-8) bytes."""
        if self.output is not None:
            mode = "wb" if isinstance(render, bytes) else "w"
            with open(self.output, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as fh:
                self._emit(render, fh)
        else:
            self._emit(render, self.env.stdout)

    def _emit(self, render: Any, fh: Any) -> None:
        if isinstance(render, bytes):
            if isinstance(fh, (io.RawIOBase, io.BufferedIOBase)):  # a file opened for bytes
                fh.write(render)
            elif hasattr(fh, "buffer"):  # a text stream over bytes (stdout): skip decoding
                fh.flush()
                fh.buffer.write(render)
                fh.buffer.flush()
            else:  # a text buffer (tests)
                fh.write(render.decode("utf-8"))
        elif isinstance(render, str):
            fh.write(render)
        else:
            render(self.console(fh))

    def write_frame(self, doc: dict, writer: Any) -> None:
        """CSV / Parquet through polars: to --output, or CSV to stdout."""
        if self.output is not None:
            writer(doc, self.format, str(self.output))
        else:
            self.env.stdout.write(_csv_text(doc, writer))

    @contextmanager
    def progress(self, files: list[str]) -> Iterator[Callable[[str], None]]:
        """A progress bar on stderr when it is a terminal (files done / total, MB/s, ETA); else silent."""
        if not self.env.stderr_isatty:
            yield lambda path: None
            return
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

        total = sum(file_size(path) for path in files)
        columns = (TextColumn("{task.fields[done]}/{task.fields[files]} files"), BarColumn(),
                   TransferSpeedColumn(), TimeRemainingColumn())
        with Progress(*columns, console=self.err, transient=True) as bar:
            task = bar.add_task("reading", total=total or 1, done=0, files=len(files))

            def advance(path: str) -> None:
                bar.update(task, advance=file_size(path), done=bar.tasks[task].fields["done"] + 1)

            yield advance

    def sessions(self, results: list, as_list: bool, redact: bool = True) -> None:
        from loopscan.reports import analyze_document, html, json_report, markdown, table

        docs = [analyze_document(r, redact) for r in results]
        if self.format == "json":
            self.write(json_report.dumps(docs if as_list else docs[0]))
        elif self.format == "markdown":
            self.write("\n---\n\n".join(markdown.render(doc) for doc in docs))
        elif self.format == "html":
            self.write(html.render(docs))
        else:
            def render(console: Console) -> None:
                for doc in docs:
                    table.render(doc, console)
            self.write(render)


def _csv_text(doc: dict, writer: Any) -> str:
    buffer = io.StringIO()
    writer(doc, "csv", buffer)
    return buffer.getvalue()

