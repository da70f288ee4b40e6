"""Refresh the output of the `$ atlas ...` examples in docs/linked-data.md.

    python scripts/docs_linked.py          # rewrite each example's output from a real run
    python scripts/docs_linked.py --check  # exit 1 if any is stale (tests/test_linked.py runs this)
"""
from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 110
BLOCK = re.compile(r"```console\n\$ (atlas [^\n]*)\n(.*?)```", re.S)


def _section(text: str) -> tuple[int, int]:
    return 0, len(text)  # the whole page


def _run(command: str) -> str:
    from click.testing import CliRunner

    from atlas.cli import cli

    result = CliRunner().invoke(cli, shlex.split(command)[1:], terminal_width=WIDTH)
    if result.exit_code != 0:
        raise SystemExit(f"{command} failed:\n{result.output}")
    return result.output


def render(text: str) -> str:
    os.environ["COLUMNS"] = str(WIDTH)
    os.environ.pop("ATLAS_DATA", None)
    start, end = _section(text)
    section = BLOCK.sub(lambda m: f"```console\n$ {m.group(1)}\n{_run(m.group(1))}```", text[start:end])
    return text[:start] + section + text[end:]


def main(argv) -> int:
    readme = ROOT / "docs" / "linked-data.md"
    text = readme.read_text(encoding="utf-8")
    new = render(text)
    if "--check" in argv:
        if new != text:
            print("docs/linked-data.md examples are stale: run python scripts/docs_linked.py",
                  file=sys.stderr)
            return 1
        return 0
    readme.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
