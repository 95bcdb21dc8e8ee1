"""Trusted modules compiled once per machine: the cache serves exactly what compile() gives."""

from __future__ import annotations

import ast
import marshal
import types

from grader.chapter import load_chapter
from grader.mutants import load_catalogue
from grader.runner.compiled import compile_modules, compiled_modules

SOURCES = [b"x = 1\n", b"def f():\n    return 2\n"]
FILE = "/course/tinyllm/seq2seq/luong.py"


def _load(code: bytes) -> types.CodeType:
    loaded = marshal.loads(code)
    assert isinstance(loaded, types.CodeType)
    return loaded


def test_each_source_maps_to_its_code_compiled_as_the_module_file(tmp_path):
    codes = compiled_modules(SOURCES, FILE, folder=tmp_path)
    assert set(codes) == set(SOURCES)
    namespace: dict = {}
    exec(_load(codes[SOURCES[1]]), namespace)
    assert namespace["f"]() == 2 and namespace["f"].__code__.co_filename == FILE


def test_a_second_call_reads_the_cache_and_a_different_set_does_not(tmp_path):
    first = compiled_modules(SOURCES, FILE, folder=tmp_path)
    files = list((tmp_path / "compiled").iterdir())
    assert len(files) == 1
    assert compiled_modules(reversed(SOURCES), FILE, folder=tmp_path) == first  # order does not matter
    compiled_modules(SOURCES[:1], FILE, folder=tmp_path)
    compiled_modules(SOURCES, "/elsewhere.py", folder=tmp_path)
    assert len(list((tmp_path / "compiled").iterdir())) == 3


def test_a_damaged_cache_is_rebuilt(tmp_path):
    first = compiled_modules(SOURCES, FILE, folder=tmp_path)
    (cached,) = (tmp_path / "compiled").iterdir()
    cached.write_bytes(cached.read_bytes()[:10])
    assert compiled_modules(SOURCES, FILE, folder=tmp_path) == first
    assert marshal.loads(cached.read_bytes())  # written again, whole


def test_an_unwritable_cache_still_compiles(tmp_path):
    (tmp_path / "compiled").write_text("a file where the folder should be")
    codes = compiled_modules(SOURCES, FILE, folder=tmp_path)
    assert set(codes) == set(SOURCES)


def test_the_code_carries_no_docstring():
    """A test in the sandbox could pass a docstring's text out through the choice of the test
    that fails (red team, round 9: the reference's leaked into a report that way)."""
    source = (b'"""The module, in words."""\nclass A:\n    """A class."""\n'
              b'    def f(self):\n        """Says how."""\n        return 2\n')
    code = compile_modules([source], FILE)[source]
    namespace: dict = {}
    exec(_load(code), namespace)
    assert namespace.get("__doc__") is None and namespace["A"].__doc__ is None and namespace["A"]().f() == 2
    assert namespace["A"].f.__doc__ is None and b"in words" not in code and b"Says how" not in code


def test_the_grader_s_modules_hold_no_assert_which_their_compiled_code_would_drop():
    catalogue = load_catalogue(load_chapter("L4.3"))
    sources = [catalogue.reference, *catalogue.variants, *(mutant.source for mutant in catalogue.mutants)]
    held = [index for index, source in enumerate(sources)
            if any(isinstance(node, ast.Assert) for node in ast.walk(ast.parse(source)))]
    assert not held, f"modules with an assert statement: {held}"
