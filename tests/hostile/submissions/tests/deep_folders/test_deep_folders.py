"""Write what the module under test holds into the names of a chain of folders past PATH_MAX in
the run's folder: the clean zygote died removing it, and its traceback, quoted in the report,
carried 1.8 KB of a grader module out (red team, round 29)."""

import os

import tinyllm.seq2seq.luong as graded


def test_the_module_is_importable():
    names = sorted(name for name, value in vars(graded).items() if getattr(value, "__module__", None) == graded.__name__)
    held = ("LEAKED-" + "|".join(names) + "|")[:200].ljust(200, "x")
    fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(30):
        os.mkdir(held, dir_fd=fd)
        deeper = os.open(held, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    os.close(fd)
    assert graded.LuongAttention
