"""Fixtures of the Python module's tests (docs/python.md "Tests").

The module under test is whatever `import c3scope` finds: the one `pip install .` put in the
venv (scripts/test), or build/python of a developer's build (PYTHONPATH=build/python). The CLI
it is compared with, and the generator of c3scope traces, come from the dev build: C3SCOPE_BIN
names its bin/ folder (default build/bin).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("C3SCOPE_BIN", ROOT / "build" / "bin"))
SHARED = Path(os.environ.get("C3SCOPE_SHARED", ROOT.parent / "shared")) / "traces"
GOLDEN = ROOT / "tests" / "golden"


def _tool(name: str) -> Path:
    p = BIN / name
    if not p.exists():
        pytest.fail(f"{p} is missing: build the dev preset first (scripts/setup), or set C3SCOPE_BIN")
    return p


@pytest.fixture(scope="session")
def cli() -> Path:
    return _tool("c3scope")


def run_cli(cli: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(cli), *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def cli_json(cli: Path, tmp: Path, inputs: list, *flags: str) -> dict:
    out = tmp / "cli.json"
    if out.exists():
        out.unlink()
    r = run_cli(cli, "analyze", *[str(i) for i in inputs], *flags, "--json", str(out))
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


@pytest.fixture(scope="session")
def synthetic(tmp_path_factory) -> Path:
    """A 2-rank training job written as c3scope traces (with CUDA API calls and NVTX), by the
    generator the GUI's tests use."""
    d = tmp_path_factory.mktemp("synthetic")
    r = subprocess.run([str(_tool("c3_gui_make_trace")), str(d), "--ranks", "2", "--steps", "4",
                        "--layers", "3"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    files = sorted(d.glob("*.sqlite"))
    assert len(files) == 2
    return d


@pytest.fixture(scope="session")
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"{SHARED} is missing: the real traces (../shared/traces) are needed")
    return SHARED
