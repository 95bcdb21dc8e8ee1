"""Chooses the Luong implementation the course tests run against, and finds the golden fixture.

The same 11 tests grade the reference, every student's file, every mutant and every variant, so
the implementation is picked at run time and installed under the one name the tests import,
``tinyllm.seq2seq.luong``:

1. ``--luong PATH``: that file;
2. else a module already in ``sys.modules`` under that name (the grader's runner installs the
   submission's bytes there before it starts pytest);
3. else ``reference/L4.3/luong.py`` of this repository.

The fixture is ``fixtures/L4.3/luong_torch.npz`` of this repository unless the environment
variable ``L43_FIXTURE`` names another file (the sandbox mounts it elsewhere).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

MODULE = "tinyllm.seq2seq.luong"
HERE = Path(__file__).resolve().parent
REFERENCE = HERE.parent.parent  # reference/: holds the tinyllm package and L4.3/luong.py
DEFAULT_IMPL = REFERENCE / "L4.3" / "luong.py"
DEFAULT_FIXTURE = REFERENCE.parent / "fixtures" / "L4.3" / "luong_torch.npz"
FIXTURE_ENV = "L43_FIXTURE"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--luong",
        metavar="PATH",
        default=None,
        help=f"the luong.py to test, installed as {MODULE} (default: the one already installed, "
        "else the repository's reference)",
    )


def install(path: Path) -> None:
    """Import ``path`` as ``tinyllm.seq2seq.luong``, replacing whatever was installed before."""
    if not path.is_file():
        raise pytest.UsageError(f"--luong: no such file: {path}")
    import tinyllm.seq2seq

    spec = importlib.util.spec_from_file_location(MODULE, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[MODULE]
        raise
    tinyllm.seq2seq.luong = module


def pytest_configure(config: pytest.Config) -> None:
    if str(REFERENCE) not in sys.path and (REFERENCE / "tinyllm").is_dir():
        sys.path.insert(0, str(REFERENCE))
    chosen = config.getoption("--luong")
    if chosen is not None:
        install(Path(chosen).resolve())
    elif MODULE not in sys.modules:
        if not DEFAULT_IMPL.is_file():
            raise pytest.UsageError(f"no {MODULE} installed and no reference at {DEFAULT_IMPL}; pass --luong PATH")
        install(DEFAULT_IMPL)


@pytest.fixture(scope="session")
def golden() -> dict[str, np.ndarray]:
    """The torch fixture as a dict of arrays (see fixtures/L4.3/oracle/luong_torch.py)."""
    path = Path(os.environ.get(FIXTURE_ENV, DEFAULT_FIXTURE))
    if not path.is_file():
        raise FileNotFoundError(f"golden fixture not found: {path} (set {FIXTURE_ENV} to its path)")
    with np.load(path) as data:
        return {key: data[key] for key in data.files}
