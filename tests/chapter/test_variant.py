"""The independently written variant passes the 11 course tests.

The variant is the second correct implementation a student's tests must accept (DESIGN section
5). It passing the course tests is also the check that the course tests accept a correct
implementation they were not written against, not just the reference.
"""

from __future__ import annotations

import pytest

from grader.chapter import load_chapter

CHAPTER = load_chapter("L4.3")


def test_the_manifest_names_the_variant():
    assert CHAPTER.variants, "chapters/L4.3.toml lists no variant"
    assert all(path.is_file() for path in CHAPTER.variants)


@pytest.mark.parametrize("variant", CHAPTER.variants, ids=[p.name for p in CHAPTER.variants])
def test_variant_passes_every_course_test(variant, course_test_failures):
    assert course_test_failures(variant) == set()

