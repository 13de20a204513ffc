import io
import json
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, settings
from typer.testing import CliRunner

from loopscan.cli import env
from loopscan.cli.app import app
from loopscan.cli.env import Environment

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
sys.path.insert(0, str(FIXTURES))  # the fixture generators (and their jsjson helper) import as modules

# No per-example deadline: a busy 2-core CI machine must not turn a slow example into a failure.
settings.register_profile("loopscan", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("loopscan")


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: takes seconds (e.g. the 200 MB single-line read); skip with -m 'not slow'")


class Run(NamedTuple):
    """One CLI invocation: exit code, stdout, stderr."""

    code: int
    out: str
    err: str

    @property
    def json(self):
        return json.loads(self.out)


@pytest.fixture
def cli(monkeypatch, tmp_path):
    """Run `loopscan ARGS` in-process with a replaced Environment (buffers, given env vars, a tmp home)."""

    def run(*args: str, environ: dict[str, str] | None = None, stdin: str | None = None) -> Run:
        out, err = io.StringIO(), io.StringIO()
        monkeypatch.setattr(env, "ENV", Environment(stdout=out, stderr=err, environ=environ or {}, home=tmp_path / "home"))
        result = CliRunner().invoke(app, list(args), input=stdin)
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return Run(result.exit_code, out.getvalue(), err.getvalue())

    return run
