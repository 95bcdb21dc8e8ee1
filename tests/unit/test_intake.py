"""Intake refuses bad submissions before anything runs, naming the file and line."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from grader.chapter import load_chapter
from grader.intake import MAX_FILE_BYTES, MAX_TEST_FILES, IntakeError, read_course_repo, read_submission

CHAPTER = load_chapter("L4.3")
GOOD_IMPL = b"class LuongAttention:\n    query_from = 'current'\n"
GOOD_TEST = b"from tinyllm.seq2seq.luong import LuongAttention\n\ndef test_x():\n    assert LuongAttention\n"


@pytest.fixture
def impl(tmp_path):
    path = tmp_path / "luong.py"
    path.write_bytes(GOOD_IMPL)
    return path


def make_tests(tmp_path, files: dict[str, bytes]):
    folder = tmp_path / "tests"
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def refused(impl, tests=None) -> str:
    """Why intake refuses a submission: a bad ``impl`` refuses it whole; bad ``tests`` only
    themselves, the implementation read all the same, to be graded without them."""
    if tests is None:
        with pytest.raises(IntakeError) as info:
            read_submission(CHAPTER, impl, tests)
        return str(info.value)
    return only_tests_refused(read_submission(CHAPTER, impl, tests), impl)


def only_tests_refused(submission, impl: Path) -> str:
    assert submission.impl == impl.read_bytes() and submission.tests is None, submission
    assert submission.tests_refused is not None
    return submission.tests_refused


def repo_tests_refused(repo: Path) -> str:
    return only_tests_refused(read_course_repo(CHAPTER, repo), repo / CHAPTER.student.impl)


def test_a_good_submission_is_read_into_memory(impl, tmp_path):
    tests = make_tests(tmp_path, {"test_a.py": GOOD_TEST, "helpers/data.json": b"{}"})
    submission = read_submission(CHAPTER, impl, tests)
    assert submission.impl == GOOD_IMPL
    assert [name for name, _ in submission.tests] == ["helpers/data.json", "test_a.py"]


def test_the_digest_depends_on_every_file(impl, tmp_path):
    tests = make_tests(tmp_path, {"test_a.py": GOOD_TEST})
    first = read_submission(CHAPTER, impl, tests).digest
    (tests / "test_a.py").write_bytes(GOOD_TEST + b"\n")
    assert read_submission(CHAPTER, impl, tests).digest != first
    assert read_submission(CHAPTER, impl, None).digest not in (first,)


def test_missing_impl(tmp_path):
    assert refused(tmp_path / "nope" / "luong.py") == f"{tmp_path}/nope/luong.py: not found"


def test_a_folder_given_as_the_impl_is_named_whole(tmp_path):
    """Named by its last part only, a tests folder given as --impl read as "tests: not found"
    (red team, round 26)."""
    folder = tmp_path / "tests"
    folder.mkdir()
    assert refused(folder) == f"{folder}: a folder, where the implementation's file was expected (give the path " \
        "of the file itself)"


def test_non_utf8_impl(impl):
    impl.write_bytes(b"x = '\xff'\n")
    assert "not UTF-8" in refused(impl)


def test_a_test_file_that_declares_another_encoding_is_refused(impl, tmp_path):
    """Under ``# coding: utf-7`` the sandbox would run ``+AAo-`` as a line break: a comment here,
    an import outside the contract there (red team, round 14)."""
    hidden = b"# coding: utf-7\nimport numpy as np  # +AAo-import tinyllm.nn as nn\n" + GOOD_TEST
    assert refused(impl, make_tests(tmp_path, {"test_a.py": hidden})) == (
        "test_a.py: declares the encoding utf-7; only UTF-8 is accepted (remove the coding line, or make it utf-8)")


@pytest.mark.parametrize("cookie", [b"# -*- coding: utf-8 -*-\n", b"\xef\xbb\xbf", b"# vim: fileencoding=ascii\n"])
def test_declarations_that_read_as_utf8_does_are_accepted(impl, tmp_path, cookie):
    assert read_submission(CHAPTER, impl, make_tests(tmp_path, {"test_a.py": cookie + GOOD_TEST})).tests


@pytest.mark.parametrize(("source", "message"), [
    (b"# coding: latin-1\nx = 1\n", "luong.py: declares the encoding iso-8859-1; only UTF-8"),
    (b"# coding: bogus\nx = 1\n", "luong.py: unknown encoding: bogus"),
])
def test_an_implementation_that_declares_another_encoding_is_refused(impl, source, message):
    impl.write_bytes(source)
    assert refused(impl).startswith(message)


@pytest.mark.parametrize("source", [b"", b"\xef\xbb\xbf", b"# to do\n\n"])
def test_an_implementation_without_code_is_refused_not_a_crash(impl, source):
    """An empty luong.py, as committed before any work, reached the runner, which refuses a module
    of 0 bytes with an exception the grader did not report (red team, round 17)."""
    impl.write_bytes(source)
    assert "holds no code yet" in refused(impl)


def test_unparsable_impl_names_the_line(impl):
    impl.write_bytes(b"x = 1\ndef broken(:\n")
    assert "luong.py:2: syntax error" in refused(impl)


@pytest.mark.parametrize("source", [b"x = 1\nfrom __future__ import annotations\n", b"x = 1\nreturn x\n"])
def test_what_only_the_compiler_refuses_is_refused_at_intake_too(impl, source):
    """A late ``from __future__`` passed intake, which only parsed the file, and then failed as a
    wrong implementation (red team, round 11): a syntax error like any other."""
    impl.write_bytes(source)
    assert "luong.py:2: syntax error" in refused(impl)


@pytest.mark.parametrize("terms", [1_000, 5_000])  # the compiler's limit, then the parser's
def test_an_expression_nested_too_deeply_is_refused_not_a_crash(impl, terms):
    """``1+1+...+1`` a thousand terms long parses but does not compile: the grader crashed with a
    RecursionError, no report written (red team, round 12)."""
    impl.write_bytes(b"x = " + b"+".join([b"1"] * terms) + b"\n")
    assert refused(impl) == "luong.py: nested too deeply to be compiled"


def test_oversized_file(impl):
    impl.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    assert "limit per file" in refused(impl)


def test_symlinked_impl(tmp_path, impl):
    link = tmp_path / "link.py"
    link.symlink_to(impl)
    assert "symbolic links" in refused(link)


def test_symlink_in_tests(impl, tmp_path):
    tests = make_tests(tmp_path, {"test_a.py": GOOD_TEST})
    os.symlink("/etc/passwd", tests / "passwd.txt")
    assert "symbolic links" in refused(impl, tests)


def test_too_many_files(impl, tmp_path):
    tests = make_tests(tmp_path, {f"test_{i}.py": GOOD_TEST for i in range(MAX_TEST_FILES + 1)})
    assert f"more than {MAX_TEST_FILES} files" in refused(impl, tests)


def test_file_type_not_accepted(impl, tmp_path):
    tests = make_tests(tmp_path, {"test_a.py": GOOD_TEST, "run.sh": b"echo hi\n"})
    assert "run.sh: file type not accepted" in refused(impl, tests)


def test_a_readme_and_git_markers_are_left_out(impl, tmp_path):
    """Common in a course repo's test folder, read by no test: left out, not refused (red team,
    round 9: either ended the whole grade in an error)."""
    tests = make_tests(tmp_path, {"test_a.py": GOOD_TEST, "README.md": b"# my tests\n", "NOTES.MD": b"",
                                  ".gitkeep": b"", "data/.gitignore": b"*.tmp\n"})
    assert [name for name, _ in read_submission(CHAPTER, impl, tests).tests] == ["test_a.py"]


def test_pytest_configuration_is_refused_saying_where_options_go(impl, tmp_path):
    tests = make_tests(tmp_path, {"test_a.py": GOOD_TEST, "pytest.ini": b"[pytest]\nmarkers = slow\n"})
    assert refused(impl, tests).startswith("pytest.ini: pytest configuration is not accepted")
    assert "conftest.py" in refused(impl, tests)


def test_no_test_file(impl, tmp_path):
    tests = make_tests(tmp_path, {"helpers.py": b"x = 1\n", "luong_tests.py": GOOD_TEST})
    assert "no test file (test_*.py or *_test.py)" in refused(impl, tests)


def test_files_named_as_pytest_collects_them_by_default_are_tests(impl, tmp_path):
    """pytest collects ``*_test.py`` as well as ``test_*.py``: a suite of the first kind was refused
    (red team, round 11)."""
    tests = make_tests(tmp_path, {"luong_test.py": GOOD_TEST})
    assert [name for name, _ in read_submission(CHAPTER, impl, tests).tests] == ["luong_test.py"]


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("import tinyllm.nn", "'tinyllm.nn'"),
        ("from tinyllm.nn import Linear", "'tinyllm.nn'"),
        ("from tinyllm import nn", "nn from 'tinyllm'"),
        ("from tinyllm.random import PCG32", "'tinyllm.random'"),
        # a name the package re-exports: not 'tinyllm.seq2seq.length_mask', no module (red team, round 17)
        ("from tinyllm.seq2seq import length_mask", "length_mask from 'tinyllm.seq2seq'"),
        ("import importlib; importlib.import_module('tinyllm.nn.module')", "'tinyllm.nn.module'"),
        ("__import__('tinyllm.random')", "'tinyllm.random'"),
    ],
)
def test_imports_outside_the_contract_name_file_and_line(impl, tmp_path, line, named):
    source = GOOD_TEST + f"\n\n{line}\n".encode()
    tests = make_tests(tmp_path, {"sub/test_b.py": source})
    message = refused(impl, tests)
    assert message.startswith(f"sub/test_b.py:7: imports {named}; tests may import only ")


@pytest.mark.parametrize(("line", "advice"), [
    ("from tinyllm.random import PCG32", "pass LuongAttention any object with a uniform(low, high, size) method"),
    ("from tinyllm.nn.linear import Linear", "named_parameters(), state_dict() and load_state_dict()"),
    ("from tinyllm.autograd.backward import x", None),  # nothing said instead: the refusal alone
])
def test_a_refused_import_says_what_to_do_instead_where_the_chapter_does(impl, tmp_path, line, advice):
    """A test of how the parameters follow the rng imported tinyllm.random and was told only that
    it may not (red team, round 24): the manifest's [student.instead_of] says what will do."""
    message = refused(impl, make_tests(tmp_path, {"test_b.py": GOOD_TEST + f"\n\n{line}\n".encode()}))
    listed = ", ".join(CHAPTER.student.allowed_imports)
    assert (advice in message) if advice else message.endswith(f"tests may import only {listed}"), message


@pytest.mark.parametrize(
    "line",
    [
        "from tinyllm.seq2seq import luong",
        "from tinyllm.seq2seq.additive import length_mask",
        "import tinyllm.autograd.functional as F",
        "from tinyllm.autograd.tensor import Tensor",
        "x = 'tinyllm.nn is not imported by a string that is not an import'",
    ],
)
def test_contract_imports_are_accepted(impl, tmp_path, line):
    tests = make_tests(tmp_path, {"test_a.py": GOOD_TEST + f"\n{line}\n".encode()})
    assert read_submission(CHAPTER, impl, tests).tests


def test_a_star_import_of_the_graded_module_is_refused_with_what_to_write(impl, tmp_path):
    """The tests are collected against a stand-in for the graded module, which cannot know what
    names a student's module defines: a star import would leave them all undefined."""
    source = GOOD_TEST + b"\n\nfrom tinyllm.seq2seq.luong import *\n"
    message = refused(impl, make_tests(tmp_path, {"test_star.py": source}))
    assert message.startswith("test_star.py:7: `from tinyllm.seq2seq.luong import *` is not supported")
    assert "import the names you use by name" in message


@pytest.mark.parametrize(("line", "instead"), [
    ("from tinyllm.seq2seq.luong import read_real_positions", "test a helper of your own through LuongAttention"),
    ("from tinyllm.seq2seq.luong import LuongAttention, _masked_softmax as soft", "look it up with hasattr"),
    # a name the contract imports: where it is imported from
    ("from tinyllm.seq2seq.luong import Tensor", "import it from tinyllm.autograd.tensor"),
])
def test_a_name_the_contract_does_not_define_is_refused_from_the_graded_module(impl, tmp_path, line, instead):
    """A suite that imported its own helper from luong.py passed the fast pass (collected against a
    stand-in), then failed on every correct implementation run alone, under a test id that could
    not be shown (red team, round 26): it could never be valid, and intake can tell at once."""
    message = refused(impl, make_tests(tmp_path, {"test_h.py": GOOD_TEST + f"\n{line}\n".encode()}))
    name = line.split(" import ")[1].split(",")[-1].split()[0]
    assert message.startswith(f"test_h.py:6: imports {name} from tinyllm.seq2seq.luong, whose contract defines "
                              "only LuongAttention; "), message
    assert instead in message


@pytest.mark.parametrize(("lines", "used"), [
    ("import tinyllm.seq2seq.luong as luong\nHELPER = luong.read_real_positions", "luong.read_real_positions"),
    ("from tinyllm.seq2seq import luong\nclass Cases:\n    soft = luong._masked_softmax", "luong._masked_softmax"),
    ("import tinyllm.seq2seq.luong\nX = [tinyllm.seq2seq.luong.helper]", "tinyllm.seq2seq.luong.helper"),
    ("from tinyllm.seq2seq import luong as L\ndef test_d(d=L.DEFAULT_D):\n    pass", "L.DEFAULT_D"),
])
def test_a_name_the_contract_does_not_define_is_refused_where_the_graded_module_is_read_at_import(
        impl, tmp_path, lines, used):
    """``import luong; HELPER = luong.helper`` at module level failed every correct implementation
    under a hidden test id, as the import of such a name did (red team, round 26)."""
    message = refused(impl, make_tests(tmp_path, {"test_h.py": GOOD_TEST + f"\n{lines}\n".encode()}))
    assert re.match(rf"test_h\.py:\d+: uses {re.escape(used)} at import time, whose contract defines only "
                    "LuongAttention; test a helper of your own", message), message


def test_the_graded_module_s_names_inside_a_test_or_its_contract_s_at_import_are_accepted(impl, tmp_path):
    """Inside a test the name is read as it runs, where a correct implementation's run explains it."""
    source = GOOD_TEST + (b"\nimport tinyllm.seq2seq.luong as luong\nCLASS, NAME = luong.LuongAttention, luong.__name__\n\n"
                          b"def test_helper():\n    if hasattr(luong, 'helper'):\n        luong.helper()\n")
    read_submission(CHAPTER, impl, make_tests(tmp_path, {"test_h.py": source}))


def test_a_course_repo_whose_tests_pytest_would_not_collect_is_refused(impl, tmp_path):
    """luong_tests.py in the tests folder: the repository passed on its implementation alone,
    exit 0, a CI gate let it through (red team, round 28). A folder not yet written to, or with a
    conftest alone, still grades the implementation alone."""
    repo = tmp_path / "repo"
    (repo / "python/tinyllm/seq2seq").mkdir(parents=True)
    (repo / "python/tinyllm/seq2seq/luong.py").write_bytes(impl.read_bytes())
    tests = repo / "python/tests/l4-3-luong"
    tests.mkdir(parents=True)
    (tests / "conftest.py").write_bytes(b"")
    assert read_course_repo(CHAPTER, repo).tests is None
    (tests / "luong_tests.py").write_bytes(GOOD_TEST)
    assert repo_tests_refused(repo) == ("python/tests/l4-3-luong: holds luong_tests.py but no test file: pytest collects "
                                  "tests only from files named test_*.py or *_test.py; rename the files that hold "
                                  "your tests")
    (tests / "luong_tests.py").unlink()
    (tests / "test_luong.PY").write_bytes(GOOD_TEST)  # pytest's patterns match the case too (round 29)
    assert repo_tests_refused(repo).startswith("python/tests/l4-3-luong: holds test_luong.PY but no test file")


def test_a_course_repo_s_tests_beside_its_tests_folder_are_refused_as_misplaced(impl, tmp_path):
    """A suite in python/tests/l4.3-luong (a dot for the dash) left the chapter's folder without a
    test file: the repository passed on its implementation alone, exit 0 (honest students, round
    30). Tests of the graded module directly in python/tests are refused too; a folder of another
    chapter, or tests of another module, are not read as the chapter's."""
    repo = tmp_path / "repo"
    (repo / "python/tinyllm/seq2seq").mkdir(parents=True)
    (repo / "python/tinyllm/seq2seq/luong.py").write_bytes(impl.read_bytes())
    other_module = b"from tinyllm.nn import Linear\n\ndef test_y():\n    assert Linear\n"
    for folder, name, source in [("l4-4-decoder", "test_decoder.py", GOOD_TEST),
                                 ("l4.3-luong", "test_other.py", other_module),
                                 ("l4.3-luong", "test_broken.py", b"def test_(:\n")]:
        (repo / "python/tests" / folder).mkdir(parents=True, exist_ok=True)
        (repo / "python/tests" / folder / name).write_bytes(source)
    assert read_course_repo(CHAPTER, repo).tests is None and read_course_repo(CHAPTER, repo).tests_refused is None
    (repo / "python/tests/l4.3-luong/deeper").mkdir()
    (repo / "python/tests/l4.3-luong/deeper/test_luong.py").write_bytes(GOOD_TEST)
    assert repo_tests_refused(repo) == ("python/tests/l4.3-luong/deeper/test_luong.py: tests tinyllm.seq2seq.luong, "
                                        "but the chapter reads its tests from python/tests/l4-3-luong, which holds no "
                                        "test file: move them there")
    (repo / "python/tests/l4-3-luong").mkdir()  # as `grader start` leaves it
    (repo / "python/tests/l4.3-luong/deeper/test_luong.py").unlink()
    (repo / "python/tests/test_luong.py").write_bytes(b"from tinyllm.seq2seq import luong\n")
    assert repo_tests_refused(repo).startswith("python/tests/test_luong.py: tests tinyllm.seq2seq.luong, but")
    (repo / "python/tests/l4-3-luong/test_a.py").write_bytes(GOOD_TEST)
    assert read_course_repo(CHAPTER, repo).tests == (("test_a.py", GOOD_TEST),)


def test_the_implementation_in_its_own_tests_folder_is_not_read_as_a_test(tmp_path):
    """A project folder given as --tests holds luong.py beside the tests: it was refused for
    importing tinyllm.nn, as a test may not (red team, round 26). Another file's imports are
    still checked."""
    impl_source = b"from tinyllm.nn import Module\n\nclass LuongAttention(Module):\n    pass\n"
    folder = make_tests(tmp_path, {"luong.py": impl_source, "test_a.py": GOOD_TEST})
    submission = read_submission(CHAPTER, folder / "luong.py", folder)
    assert submission.impl == impl_source and [name for name, _ in submission.tests] == ["test_a.py"]
    (folder / "helper.py").write_bytes(impl_source)
    assert refused(folder / "luong.py", folder).startswith("helper.py:1: imports 'tinyllm.nn'")


def test_course_repo_layout(tmp_path):
    repo = tmp_path / "repo"
    (repo / "python/tinyllm/seq2seq").mkdir(parents=True)
    (repo / "python/tinyllm/seq2seq/luong.py").write_bytes(GOOD_IMPL)
    submission = read_course_repo(CHAPTER, repo)
    assert submission.tests is None
    (repo / "python/tests/l4-3-luong").mkdir(parents=True)  # as `grader start` leaves it: no tests yet
    assert read_course_repo(CHAPTER, repo).tests is None
    (repo / "python/tests/l4-3-luong/__pycache__").mkdir()  # what reading skips is no test either
    (repo / "python/tests/l4-3-luong/__pycache__/test_a.py").write_bytes(GOOD_TEST)
    assert read_course_repo(CHAPTER, repo).tests is None
    (repo / "python/tests/l4-3-luong/test_a.py").write_bytes(GOOD_TEST)
    assert read_course_repo(CHAPTER, repo).tests


def test_a_link_in_an_otherwise_empty_course_tests_folder_is_refused(tmp_path):
    repo = tmp_path / "repo"
    (repo / "python/tinyllm/seq2seq").mkdir(parents=True)
    (repo / "python/tinyllm/seq2seq/luong.py").write_bytes(GOOD_IMPL)
    (repo / "python/tests/l4-3-luong").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/test_a.py").write_bytes(GOOD_TEST)
    (repo / "python/tests/l4-3-luong/more").symlink_to(tmp_path / "elsewhere")  # not "no tests": refused
    assert repo_tests_refused(repo).startswith("more: symbolic links are not accepted")


def test_a_course_repo_without_its_implementation_names_the_path(tmp_path):
    (tmp_path / "repo/python").mkdir(parents=True)
    with pytest.raises(IntakeError, match="^python/tinyllm/seq2seq/luong.py: not found in .*grader start"):
        read_course_repo(CHAPTER, tmp_path / "repo")


def test_course_repo_that_is_not_a_folder(tmp_path):
    with pytest.raises(IntakeError, match="not a folder"):
        read_course_repo(CHAPTER, tmp_path / "nowhere")


@pytest.mark.parametrize("linked", ["python", "python/tinyllm/seq2seq", "python/tests", "python/tests/l4-3-luong"])
def test_a_course_repo_cannot_reach_outside_itself_through_a_linked_folder(tmp_path, linked):
    """Linking python/tinyllm/seq2seq to the grader's reference/L4.3 graded the reference itself."""
    outside = tmp_path / "outside"  # laid out so that every link below leads to files that would be read
    (outside / "tinyllm/seq2seq").mkdir(parents=True)
    (outside / "tinyllm/seq2seq/luong.py").write_bytes(GOOD_IMPL)
    (outside / "tests/l4-3-luong").mkdir(parents=True)
    (outside / "tests/l4-3-luong/test_a.py").write_bytes(GOOD_TEST)
    repo = tmp_path / "repo"
    (repo / "python/tinyllm/seq2seq").mkdir(parents=True)
    (repo / "python/tinyllm/seq2seq/luong.py").write_bytes(GOOD_IMPL)
    (repo / "python/tests/l4-3-luong").mkdir(parents=True)
    shutil.rmtree(repo / linked)
    (repo / linked).symlink_to(outside / linked.removeprefix("python").lstrip("/"), target_is_directory=True)
    refusal = f"{linked}: symbolic links are not accepted in a course repository"
    if linked.startswith(CHAPTER.student.tests.rpartition("/")[0]):  # the tests' path alone: the rest is graded
        assert repo_tests_refused(repo).startswith(refusal)
    else:
        with pytest.raises(IntakeError, match=f"^{refusal}"):
            read_course_repo(CHAPTER, repo)


def test_folders_nested_too_deep_are_refused_by_name(impl, tmp_path):
    tests = make_tests(tmp_path, {"test_a.py": GOOD_TEST})
    deep = tests.joinpath(*["d"] * 40)  # deeper than the walk should ever go
    deep.mkdir(parents=True)
    (deep / "notes.txt").write_text("x")
    assert refused(impl, tests) == "d/d/d/d/d/d/d/d: folders nested deeper than 8 levels are not accepted"


def test_a_nested_link_is_named_by_its_path_from_the_tests_folder(impl, tmp_path):
    tests = make_tests(tmp_path, {"test_a.py": GOOD_TEST, "helpers/more/data.txt": b"x"})
    os.symlink("/etc/passwd", tests / "helpers/more/passwd.txt")
    assert refused(impl, tests) == "helpers/more/passwd.txt: symbolic links are not accepted"


def deny(monkeypatch, method: str, name: str) -> None:
    """Make ``Path.<method>`` fail with EACCES on the path called ``name``, as for a file or folder
    the grader's user may not read (as root, chmod cannot show it)."""
    real = getattr(Path, method)

    def denied(path, *args, **kwargs):
        if path.name == name:
            raise PermissionError(13, "Permission denied")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(Path, method, denied)


def test_a_file_that_cannot_be_read_is_refused_by_name(impl, tmp_path, monkeypatch):
    tests = make_tests(tmp_path, {"test_a.py": GOOD_TEST, "data/table.csv": b"1,2\n"})
    deny(monkeypatch, "read_bytes", "table.csv")
    assert refused(impl, tests) == "data/table.csv: cannot be read (Permission denied)"


def test_a_folder_that_cannot_be_listed_is_refused_by_name(impl, tmp_path, monkeypatch):
    tests = make_tests(tmp_path, {"test_a.py": GOOD_TEST, "private/notes.txt": b"x"})
    deny(monkeypatch, "iterdir", "private")
    assert refused(impl, tests) == "private: cannot be listed (Permission denied)"


@pytest.mark.parametrize("name,shown", [
    (b"helper_\xff.py", "helper_\\udcff.py"),  # not UTF-8: the digest could not even be taken
    (b"test_\x1b[2J.py", "test_\\x1b[2J.py"),  # an escape sequence for whoever reads the refusal
    (b"data/a\nb.txt", "data/a\\nb.txt"),
])
def test_names_that_are_not_printable_utf8_are_refused(impl, tmp_path, name, shown):
    tests = make_tests(tmp_path, {"test_a.py": GOOD_TEST, "data/x.txt": b"x"})
    with open(os.path.join(os.fsencode(tests), name), "wb") as file:
        file.write(b"x = 1\n")
    assert refused(impl, tests) == f"{shown}: file and folder names must be printable UTF-8"
