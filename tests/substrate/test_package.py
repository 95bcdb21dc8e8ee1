"""The substrate stays importable with numpy alone, and never contains or imports the graded file."""

from __future__ import annotations

import json
import subprocess
import sys

from grader.chapter import load_chapter

CHAPTER = load_chapter("L4.3")

# Prints the top-level modules that importing every substrate module adds beyond the standard library.
NEW_TOP_LEVEL_MODULES = """
import json, sys
before = set(sys.modules)
import tinyllm.autograd.functional, tinyllm.nn, tinyllm.random, tinyllm.seq2seq.additive
added = {name.partition(".")[0] for name in set(sys.modules) - before}
print(json.dumps({
    "third_party": sorted(added - set(sys.stdlib_module_names)),
    "luong_imported": "tinyllm.seq2seq.luong" in sys.modules,
}))
"""


def test_the_substrate_imports_nothing_but_numpy_and_the_standard_library():
    run = subprocess.run(
        [sys.executable, "-c", NEW_TOP_LEVEL_MODULES],
        env={"PYTHONPATH": str(CHAPTER.substrate.parent)},
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(run.stdout)
    assert found["third_party"] == ["numpy", "tinyllm"]
    assert not found["luong_imported"]


def test_the_substrate_has_no_luong_module():
    assert list(CHAPTER.substrate.rglob("luong.py")) == []
