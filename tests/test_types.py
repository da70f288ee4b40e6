"""The type checker over atlas/: mypy with the project's own configuration (pyproject.toml)."""
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_finds_no_error_in_atlas():
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT,
                          capture_output=True, text=True)
    errors = [x for x in done.stdout.splitlines() if ": error:" in x]
    assert done.returncode == 0 and not errors, "\n".join(errors or [done.stdout, done.stderr])


def test_no_error_is_silenced_wholesale():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert "ignore_errors" not in config and config.get("ignore_missing_imports") is not True
    for o in config.get("overrides", []):
        assert "ignore_errors" not in o, o  # only a library without types may be skipped, by name
        assert not any(m.startswith("atlas") for m in o["module"]), o
    bare = [f"{p.relative_to(ROOT)}:{n}" for p in sorted((ROOT / "atlas").rglob("*.py"))
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"#\s*type:\s*ignore(?!\[)", line)]
    assert not bare, f"a type: ignore without its error code: {bare}"
