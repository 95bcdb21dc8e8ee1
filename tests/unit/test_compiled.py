"""Trusted modules compiled once per machine: the cache serves exactly what compile() gives."""

from __future__ import annotations

import marshal
import types

from grader.runner.compiled import compiled_modules

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
