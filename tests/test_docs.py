"""The tour (docs/tour.md) shows real, current output, and every command is in the README and has help."""
from __future__ import annotations

import runpy

from click.testing import CliRunner

from atlas.cli import COMMANDS, cli
from conftest import ROOT


def test_tour_is_current():
    tour = runpy.run_path(str(ROOT / "scripts" / "docs_tour.py"))
    assert tour["main"](["--check"]) == 0, "docs/tour.md is stale: run python scripts/docs_tour.py"


def test_every_command_is_in_the_readme_and_has_help():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in COMMANDS:
        assert f"atlas {name}" in readme, name
        result = CliRunner().invoke(cli, [name, "--help"])
        assert result.exit_code == 0 and "Example" in result.output, name
