"""Every command and option of the CLI is documented in the README (the sqlite-utils habit)."""

from pathlib import Path

import typer.core
import typer.main

from loopscan.cli.app import app

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def _commands():
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    return group, group.commands


def test_every_command_is_in_the_readme():
    _, commands = _commands()
    assert commands, "no commands registered"
    for name in commands:
        assert f"loopscan {name}" in README, f"command {name} missing from README"


def test_every_option_is_in_the_readme():
    group, commands = _commands()
    missing = []
    for name, command in [("loopscan", group), *commands.items()]:
        for param in command.params:
            if not isinstance(param, typer.core.TyperOption) or param.hidden:
                continue
            for flag in param.opts + param.secondary_opts:
                if flag not in README:
                    missing.append(f"{name} {flag}")
    assert not missing, f"undocumented options: {missing}"
