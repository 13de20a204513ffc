"""The process environment the CLI talks to; tests replace it."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Mapping


@dataclass
class Environment:
    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    home: Path = field(default_factory=Path.home)

    @property
    def stdout_isatty(self) -> bool:
        return bool(getattr(self.stdout, "isatty", lambda: False)())

    @property
    def stderr_isatty(self) -> bool:
        return bool(getattr(self.stderr, "isatty", lambda: False)())

    @property
    def no_color(self) -> bool:
        return bool(self.environ.get("NO_COLOR"))


ENV = Environment()  # the one the CLI uses; tests swap it for one writing to buffers
