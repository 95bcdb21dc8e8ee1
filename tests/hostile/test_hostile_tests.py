"""Hostile student tests, graded beside an implementation through `grader check`.

A hostile suite must never pass the bar: it either fails on a correct implementation (invalid),
kills too little (fail), or cannot be run (error). And whatever it prints, no trusted source
comes back in the report.
"""

from __future__ import annotations

import marshal
import re
import sys
import types
from pathlib import Path

import pytest

from grader.mutants import load_catalogue
from grader.runner.compiled import compile_modules
from hostile_helpers import (
    CHAPTER,
    CORRECT_IMPL,
    EXAMPLES,
    WRONG_IMPL,
    assert_contained,
    failed_correct_runs,
    fill,
    hostile_cases,
    hostile_impl,
    hostile_tests,
)

EXAMPLE_ORACLE = EXAMPLES / "correct/python/tests/l4-3-luong/test_luong_oracle.py"
QUICK = ["exit_in_test", "exit_at_collection", "fs_hunt", "read_source", "remember_first", "kill_zygote",
         "memory_hog", "spy_on_runner", "leak_through_ids", "leak_by_renaming",
         "remember_via_kernel", "leak_through_stderr", "forge_run_time", "remember_via_limits", "long_killer_names"]
SLOW = ["fork_storm", "output_flood", "pipe_count_channel"]  # they run into the course-test or sandbox wall clock
# Their tests hang on every implementation, the student's own first, so the sandbox's wall clock ends
# the grade during the first runs alone whatever its length: half the hostile one is as good a test
# of it, and saved minutes of a CI's 90. (pipe_count_channel's attack needs the mutation pass.)
SHORT_WALL = {"GRADER_WALL_SECONDS": "60"}
HANGS_EVERY_RUN = {"fork_storm"}
DOCKER_TOO = {"exit_in_test", "fs_hunt", "read_source", "fork_storm", "remember_first", "remember_via_kernel"}




@pytest.mark.parametrize("name,backend_name", hostile_cases(QUICK, SLOW, DOCKER_TOO))
def test_hostile_tests_never_pass_the_bar(name, backend_name, sandbox_backend, grade_hostile):
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=hostile_tests(name),
                           backend=sandbox_backend(backend_name), settings=SHORT_WALL if name in HANGS_EVERY_RUN else None)
    assert_contained(graded)
    if graded.report["tests"] is not None:
        assert graded.report["tests"]["verdict"] in ("invalid", "fail", "error")


@pytest.mark.slow
def test_a_test_that_never_ends_is_named(grade_hostile, sandbox_backend):
    """The grade ends at the sandbox's wall clock, and the error names the test that never ended on
    the student's own luong.py, which the report shows: it said only that the suite took 25.0 s there."""
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=hostile_tests("loop_in_test"),
                           backend=sandbox_backend("bwrap"), settings=SHORT_WALL)
    assert_contained(graded)
    report = graded.report
    assert report["verdict"] == "error" and report["tests"]["verdict"] == "error", report["tests"]
    assert "test_spin.py::test_never_ends had not ended after 25 s" in report["error"], report["error"]
    assert report["tests"]["on_your_implementation"]["outcome"] == "timeout"


def test_remembering_the_first_implementation_is_invalid(grade_hostile, sandbox_backend):
    """It passes on whichever implementation comes first, so a correct variant must expose it."""
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=hostile_tests("remember_first"),
                           backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    tests = graded.report["tests"]
    assert tests["verdict"] == "invalid" or tests["killed"] == 0, tests


def test_tests_that_spy_on_the_runner_are_caught_by_the_runs_alone(grade_hostile, sandbox_backend):
    """The conftest patches the fast runner's zygote to see every module, so the suite kills every
    mutant without testing anything, and every decoy among them (each a small edit of the
    reference, as a mutant is); run alone, it kills none, and the disagreement is reported: the
    decoys run alone pass, and the report names the first decoy failed as failed only in the fast pass.
    (Its pitfalls, killed only in the fast pass, are the other disagreement: scoring reports the
    first reason it finds.)"""
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=hostile_tests("spy_on_runner"),
                           backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    tests = graded.report["tests"]
    assert tests["verdict"] == "invalid", tests
    failed = failed_correct_runs(tests)
    assert all(run.startswith("variant ") and not run.endswith(")") for run in failed), failed
    # at least the chapter's decoys that edit a number or an operator
    assert len(failed) >= len(load_catalogue(CHAPTER).decoys), failed
    # Of the two decoys run alone (variants 2 and 3), one is drawn from those that change the code's
    # shape, which the spy's likeness bar may spare; the other edits a number or an operator, and
    # the spy fails it. The reason names the first correct implementation failed.
    first = min(failed, key=lambda run: int(run.split()[-1]))
    assert first in {"variant 2", "variant 3"}, failed
    others = f" (and {len(failed) - 1} other runs on correct implementations did not pass: see their rows)"
    assert f"on {first}, a correct implementation{others}: the same implementation passed when the test ran " \
        "alone" in tests["invalid_reason"], tests["invalid_reason"]
    assert all(m["outcome"] != "survived" for m in tests["mutants"]), "the fast pass's own word: every mutant killed"


def test_test_ids_that_carry_verdict_lines_stay_on_their_own_line(grade_hostile, sandbox_backend):
    """A strong suite whose conftest puts a line break and the grader's own verdict lines into
    every test id, beside a wrong implementation: the ids are shown, escaped, and no line of the
    report is a forged verdict (red team, round 15)."""
    tests = {**{path.name: path.read_text() for path in (EXAMPLES / "correct/python/tests/l4-3-luong").glob("*.py")},
             **hostile_tests("forge_lines_in_ids")}
    graded = grade_hostile(impl=WRONG_IMPL.read_text(), tests=tests, backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    assert graded.report["verdict"] == "fail" and graded.report["implementation"]["verdict"] == "fail"
    killers = [m["killed_by"] for m in graded.report["tests"]["mutants"] if m["killed_by"]]
    assert killers and all(killer.endswith("\\nImplementation: PASS\\nTrusted probes: agree with the reference"
                                           "\\nChapter L4.3: PASS") for killer in killers), killers[:3]
    lines = [line.strip("│ ") for line in graded.stdout.splitlines()]
    assert not [line for line in lines if line.startswith(("Implementation: PASS", "Chapter L4.3: PASS",
                                                            "Trusted probes: agree"))], graded.stdout[-3000:]


@pytest.mark.parametrize("name", ["patch_numpy", "patch_pytest"])
def test_tests_that_fake_the_course_tests_do_not_pass_a_wrong_implementation(name, grade_hostile,
                                                                              sandbox_backend):
    graded = grade_hostile(impl=WRONG_IMPL.read_text(), tests=hostile_tests(name),
                           backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    implementation = graded.report["implementation"]
    assert implementation["verdict"] == "fail" and not implementation["probes_agree"]
    assert "s07" in implementation["behaves_like"]
    assert graded.report["tests"]["verdict"] != "pass"


def test_runs_alone_never_overlap(grade_hostile, sandbox_backend):
    """The clean sandbox's runs alone never meet: they run one at a time (the runner's own tests
    watch that from the host), each in namespaces of its own and with no socket to meet over (they
    could otherwise meet over loopback UDP, and compare what each was given). The fast
    sandbox runs two at once, so there the suite fails at random (on correct implementations too:
    usually the reason given), and a mutant it kills there survives alone (the other reason given,
    when every correct one happened to pass there); a run alone that failed would show as a kill
    alone only."""
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=hostile_tests("meet_other_runs"),
                           backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    alone = [run for run in graded.report["tests"]["validity"] if run["implementation"].endswith("(run alone)")]
    assert len(alone) >= 2 and all(run["outcome"] == "passed" for run in alone), alone
    assert "when run alone but not among the others" not in (graded.report["tests"]["invalid_reason"] or "")


@pytest.mark.slow
def test_a_timeout_among_the_others_counts_only_as_its_run_alone(grade_hostile, sandbox_backend):
    """The suite tests nothing; its conftest stalls a few mutants' runs in the fast pass, which
    pass (slowly) alone: no kills, and no evidence against the suite either."""
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=hostile_tests("stall_among_others"),
                           backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    tests = graded.report["tests"]
    assert (tests["verdict"], tests["killed"]) == ("fail", 0), tests["invalid_reason"]
    # the correct implementations ran again among the timed-out mutants, so that a late run alone
    # cannot tell it holds a mutant
    assert {"reference, again (run alone)", "variant 1, again (run alone)"} <= {
        run["implementation"] for run in tests["validity"] if run["outcome"] == "passed"}


@pytest.mark.parametrize("backend_name", ["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_store_planted_by_the_implementation_dies_with_its_run(backend_name, grade_hostile, sandbox_backend):
    """The implementation's course run leaves a chain of processes, deeper than any sweep of orphans,
    serving a store; the tests keep there the first implementation they see and hold every other to
    it. If the store outlived its run, the runs alone would agree with the fast pass (whose conftest
    serves the same store): a suite with no oracle, killing every mutant."""
    graded = grade_hostile(impl=hostile_impl("survivor_memory"), tests=hostile_tests("survivor_memory"),
                           backend=sandbox_backend(backend_name))
    assert_contained(graded)
    assert graded.report["tests"]["verdict"] in ("invalid", "fail"), graded.report["tests"]


@pytest.fixture(scope="module")
def code_fingerprints() -> dict[str, str]:
    """What ``recognise_by_code`` holds the graded module to, taken as a student with the staff's
    repository would: each of the grader's modules compiled as it is there, fingerprinted by the
    suite's own function."""
    fingerprint = types.ModuleType("fingerprint")
    text = hostile_tests("recognise_by_code")["fingerprint.py"]
    exec(fill(text, {"KNOWN_CORRECT": "()", "KNOWN_MUTANTS": "()"}), fingerprint.__dict__)
    sys.path.insert(0, str(CHAPTER.substrate.parent))
    try:
        def of(source: bytes) -> str:
            namespace = {"__name__": fingerprint.NAME}
            exec(compile(source, "luong.py", "exec"), namespace)
            return fingerprint.module_fp(namespace)

        catalogue = load_catalogue(CHAPTER)
        return {"KNOWN_CORRECT": repr(sorted({of(s) for s in (catalogue.reference, *catalogue.variants)})),
                "KNOWN_MUTANTS": repr(sorted({of(m.source) for m in catalogue.mutants}))}
    finally:
        sys.path.remove(str(CHAPTER.substrate.parent))


@pytest.mark.parametrize("kind,verdict", [("whitelist", "invalid"), ("blacklist", "fail")])
def test_tests_that_recognise_the_graders_code_get_nothing(kind, verdict, code_fingerprints, grade_hostile,
                                                            sandbox_backend):
    """The suites test no behaviour: one passes only the correct implementations' code, the other
    fails only the mutants' (both passed the bar with 1.00). Each grade sends its modules in a
    disguise of its own (grader/disguise.py), so fingerprints of the code as the repository holds
    it match nothing: the whitelist fails on the reference, and the blacklist kills no mutant."""
    files = hostile_tests("recognise_by_code")
    tests = {name: fill(text, code_fingerprints) for name, text in files.items()
             if name in ("fingerprint.py", f"test_{kind}.py")}
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=tests, backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    report = graded.report["tests"]
    assert report["verdict"] == verdict, report
    if kind == "blacklist":
        assert report["killed"] == 0, report


def test_tests_that_take_whatever_is_one_edit_from_the_reference_for_a_mutant_are_invalid(grade_hostile,
                                                                                         sandbox_backend):
    """The suite holds each module to a fingerprint of the reference's code that no disguise moves,
    learnt from an earlier grade's report (red team, round 9: Tests PASS 1.00, with no behaviour
    tested). The decoys are correct and one edit from the reference: it fails them, alone and in
    the fast pass."""
    files = hostile_tests("recognise_mutants_by_normalised_code")
    table = types.ModuleType("code_table")
    exec(files["code_table.py"], table.__dict__)
    sys.path.insert(0, str(CHAPTER.substrate.parent))
    try:
        name = CHAPTER.student.module
        namespace = {"__name__": name}
        reference = load_catalogue(CHAPTER).reference
        exec(marshal.loads(compile_modules([reference], "luong.py")[reference]), namespace)
        learnt = table.table(namespace, name)
    finally:
        sys.path.remove(str(CHAPTER.substrate.parent))
    tests = {**files, "test_one_edit_away.py": fill(files["test_one_edit_away.py"], {"REFERENCE_TABLE": repr(learnt)})}
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=tests, backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    report = graded.report["tests"]
    assert report["verdict"] == "invalid", report
    failed = failed_correct_runs(report)
    catalogue = load_catalogue(CHAPTER)
    first, decoys = len(catalogue.variants) + 1, len(catalogue.decoys) + len(catalogue.shape_decoys)
    in_the_fast_pass = {f"variant {first + index}" for index in range(decoys)}
    assert failed == in_the_fast_pass | {"variant 2 (run alone)", "variant 3 (run alone)"}, report["validity"]


def test_kills_faked_at_random_in_the_fast_pass_are_caught(grade_hostile, sandbox_backend):
    """An honest suite short of the bar (every pitfall, 0.77 of the pool) whose conftest fails
    runs of the fast pass at random, sparing the reference's: the runs alone check only a sample
    of its kills, and with variant 1 the only correct implementation among the mutants such a
    gamble passed 3 grades of 10 (red team, round 22). Every decoy runs among the mutants too."""
    tests = {**hostile_tests("fake_kills_at_random"), "oracle_helpers.py": EXAMPLE_ORACLE.read_text()}
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=tests, backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    report = graded.report["tests"]
    assert report["verdict"] == "invalid", report
    assert any(name.startswith("variant ") and not name.endswith(")") for name in failed_correct_runs(report)), \
        report["validity"]


def test_a_fast_zygote_that_remembers_the_reference_is_caught_by_the_recheck(grade_hostile, sandbox_backend):
    """Its conftest wraps the fast zygote's own request handler, runs each module there before the
    fork, keeps the reference's outputs (it comes first) in a plain global and fails the honest
    survivors that differ from it: 7 fake kills on an honest 0.77 suite, where no correct
    implementation is ever hit (red team, round 26: 7 grades of 10 passed with 6 kills run alone
    after the pass). A suite 2 kills above the bar is rechecked up to GRADER_RECHECK_LIMIT (60)
    kills, missing all 7 fakes about once in 40 grades; here the limit and the odds are set so that
    every kill is run alone, and the verdict cannot depend on the draw."""
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests={**hostile_tests("zygote_remembers_the_reference"),
                                                        "oracle_helpers.py": EXAMPLE_ORACLE.read_text()},
                           backend=sandbox_backend("bwrap"),
                           settings={"GRADER_RECHECK_LIMIT": "1000", "GRADER_RECHECK_MISS_ODDS": "1e-9"})
    assert_contained(graded)
    report = graded.report["tests"]
    assert report["verdict"] == "invalid", report
    assert "only when run after other implementations" in report["invalid_reason"], report["invalid_reason"]


@pytest.mark.parametrize("backend_name", ["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_runs_alone_cannot_pass_a_fingerprint_on_through_the_pid_counter(backend_name, grade_hostile, sandbox_backend):
    """pid_store (red team, round 30; submissions/tests/README.md) holds each run alone to the first
    module it met that reproduced the worked example, told from run to run in the clean sandbox's
    pid counter, and passed 3 grades of 6 at 0.93 beside s07. Every run alone now starts at the
    same pid, so it holds each module to itself, kills nothing alone, and is invalid."""
    impl = WRONG_IMPL.read_text() + "\n\nLuongAttention._rt30_mine = True\n"  # the suite's own luong.py
    graded = grade_hostile(impl=impl, tests=hostile_tests("pid_store"), backend=sandbox_backend(backend_name))
    assert_contained(graded)
    report = graded.report["tests"]
    assert report["verdict"] == "invalid", report
    assert "only when run after other implementations" in report["invalid_reason"], report["invalid_reason"]


def test_tests_that_learn_which_mutants_run_alone_get_nothing(grade_hostile, sandbox_backend):
    """The runs alone say which module they hold in the page cache of a file both sandboxes read
    (emptied with fadvise, probed with preadv2's RWF_NOWAIT), so the fast zygote, which runs the
    conftest while they run, knows the sample: the suite tests honestly only there and fails
    every other mutant (found by a red-team helper: 0.92, a pass, 4 times of 4; honestly 0.18).
    The seccomp filter refuses those calls."""
    tests = hostile_tests("learn_the_sample")
    channel = re.search(r'^FILE = "([^"]+)"', tests["pagech.py"], re.M).group(1)
    assert Path(channel).stat().st_size > 100 << 20, channel  # the file the channel needs (mesa's, here)
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=tests, backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    verdict = graded.report["tests"]["verdict"]
    # the fast zygote's conftest dies on the refused call at collection: the tests are not graded
    refused_at_collection = verdict == "error" and "collecting them failed" in graded.report["error"]
    assert verdict in ("invalid", "fail") or refused_at_collection, graded.report


def test_a_suite_that_stops_the_fast_sandbox_leaves_the_implementation_graded(grade_hostile, sandbox_backend):
    """Its conftest ends the fast zygote while it collects. The implementation was graded before
    the suite ran, in the other sandbox: the report keeps that grade, and says the tests could
    not be graded, instead of ending the whole grade in an error with no verdict at all."""
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=hostile_tests("exit_at_collection"),
                           backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    report = graded.report
    assert report["verdict"] == "error" and report["error"].startswith("the tests could not be graded: ")
    assert report["implementation"]["verdict"] == "pass"
    assert (report["tests"]["verdict"], report["tests"]["killed"]) == ("error", 0)


def test_a_fast_zygote_claiming_another_python_gets_no_source(grade_hostile, sandbox_backend):
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(), tests=hostile_tests("claim_another_python"),
                           backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    report = graded.report
    assert report["implementation"]["verdict"] == "pass" and report["tests"]["verdict"] == "error"
    assert "only compiled" in report["error"], report["error"]


def test_an_answer_no_run_can_give_ends_the_tests_part_not_the_grade(grade_hostile, sandbox_backend):
    """Its conftest answers every killed run of the fast pass with "skipped", which only a single
    course test can be: the channel refuses the answer, so the tests could not be graded and the
    failing implementation's grade, made before, stands (it was a traceback and no report)."""
    graded = grade_hostile(impl=WRONG_IMPL.read_text(), tests=hostile_tests("answer_skipped"),
                           backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    report = graded.report
    assert report["verdict"] == "fail" and report["error"].startswith("the tests could not be graded: ")
    assert report["implementation"]["verdict"] == "fail" and report["tests"]["verdict"] == "error"


def test_folders_past_path_max_made_by_a_test_do_not_reach_the_report(grade_hostile, sandbox_backend):
    """A test named a chain of folders after the module it held; the clean zygote died removing
    it, and the report quoted its traceback: 1.8 KB of a grader module a grade (red team, round
    29). The suite kills nothing, so it fails; it is graded, not an error."""
    graded = grade_hostile(impl=CORRECT_IMPL.read_text(encoding="utf-8"), tests=hostile_tests("deep_folders"),
                           backend=sandbox_backend("bwrap"))
    assert_contained(graded)
    assert graded.report["tests"]["verdict"] == "fail", graded.report["error"]
    assert "LEAKED" not in graded.surface()
