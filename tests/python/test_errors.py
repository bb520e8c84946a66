"""Bad arguments raise UsageError, bad inputs TraceError, each with the CLI's one line; hostile
files never crash the interpreter; Ctrl-C cancels; the GIL is released while C++ works."""

from __future__ import annotations

import _thread
import shutil
import signal
import threading
import time

import pytest

import c3scope
from conftest import GOLDEN, ROOT, run_cli

TWO = [str(GOLDEN / "kineto_two_ranks" / f"rank{i}.json") for i in (0, 1)]


def test_errors_are_one_line_exceptions(tmp_path, cli):
    assert issubclass(c3scope.UsageError, c3scope.Error)
    assert issubclass(c3scope.TraceError, c3scope.Error)
    missing = tmp_path / "missing.json"
    with pytest.raises(c3scope.TraceError) as e:
        c3scope.open(str(missing))
    msg = str(e.value)
    assert "missing.json" in msg and "\n" not in msg
    # The CLI says the same line (after its "analyze: ").
    r = run_cli(cli, "analyze", str(missing))
    assert r.returncode == 2
    assert r.stderr.strip().endswith(msg)
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\x00\x01 not a trace \x1b[31m")
    with pytest.raises(c3scope.TraceError) as e:
        c3scope.open(str(garbage))
    assert "\x1b" not in str(e.value)


@pytest.mark.parametrize("kw", [
    {"step": "("},
    {"range": "[z-a]"},
    {"overlap_threshold": 2.0},
    {"min_samples": 0},
    {"kernel_wait_us": -1.0},
    {"queue_limit": 0},
    {"sequence_length": 99},
    {"what_if": ["nonsense"]},
    {"workers": 0},
    {"workers": True},
    {"workers": 1 << 40},
    {"min_samples": 1 << 40},
    {"queue_limit": "4"},
    {"kernel_wait_us": "10"},
    {"hta_step": 1.5},
    {"rules": "/nonexistent/rules.txt"},
])
def test_bad_arguments_raise_usage_error(kw):
    with pytest.raises(c3scope.UsageError) as e:
        c3scope.open(TWO, **kw)
    assert "\n" not in str(e.value)


def test_range_or_step_matching_nothing(cli):
    with pytest.raises(c3scope.UsageError, match="matches no"):
        c3scope.open(TWO, step="NoSuchStep")
    with pytest.raises(c3scope.UsageError, match="matches no"):
        c3scope.open(TWO, range="NoSuchRange")


def test_bad_frame_arguments():
    job = c3scope.open(TWO)
    with pytest.raises(c3scope.UsageError):
        job.activities(kind="bogus")
    with pytest.raises(c3scope.UsageError):
        job.activities(rank="0")
    with pytest.raises(c3scope.UsageError):
        job.sql(42)


def test_hostile_files_never_crash(tmp_path):
    """Every saved fuzzing regression (fuzz/regressions: inputs that once crashed or misled a
    reader) opens with a report or a TraceError."""
    files = [p for p in (ROOT / "fuzz" / "regressions").rglob("*") if p.is_file()]
    assert len(files) > 10
    opened = refused = 0
    for f in files:
        if f.parent.name in ("cupti_decode", "snapshot"):
            continue  # not inputs a user opens (the collector's buffers, the cache's format)
        try:
            job = c3scope.open(str(f))
            job.report()
            opened += 1
        except c3scope.TraceError as e:
            assert "\n" not in str(e)
            refused += 1
    assert opened + refused > 5


def test_hta_path_refuses_other_formats(synthetic):
    with pytest.raises(c3scope.UsageError, match="PyTorch"):
        c3scope.open(str(synthetic), hta_critical_path=True)


@pytest.fixture(scope="module")
def big_job(tmp_path_factory):
    """Copies of one real rank, enough that opening them takes a while."""
    src = ROOT.parent / "shared" / "traces" / "kineto" / "hta_negative_queue_rank0.json.gz"
    d = tmp_path_factory.mktemp("big")
    for i in range(48):
        shutil.copy(src, d / f"r{i}.json.gz")
    return sorted(str(p) for p in d.iterdir())


def test_ctrl_c_cancels_an_open(big_job):
    # Python's own SIGINT handler, which interrupt_main needs: a process started in the
    # background by a shell without job control (`(bash -c '...' &)`) inherits SIGINT ignored,
    # and then Python leaves it so.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            c3scope.open(big_job, workers=1, progress=False)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - start < 20  # stopped at the next check, not at the end
    # The module still works after a cancelled open.
    assert c3scope.open(TWO).report()["counts"]["kernels"] == 12


def test_gil_is_released_while_cpp_works(big_job):
    ticks = 0
    stop = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    start = time.monotonic()
    c3scope.open(big_job[:8], workers=1, progress=False)
    took = time.monotonic() - start
    stop.set()
    t.join()
    # A thread holding the GIL for the whole open would leave the counter at a handful.
    assert took > 0.2 and ticks > took * 100
