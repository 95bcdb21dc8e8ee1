"""What a request tells the zygote about test order (driver.WarmRunner, no sandbox started)."""

from __future__ import annotations

from grader.runner.driver import MAX_ORDER_BYTES, WarmRunner
from grader.runner.inside.protocol import MAX_HEADER_BYTES, encode_frame
from grader.sandbox import get_backend


def test_a_request_names_only_the_tests_that_killed(chapter):
    """Every request carries the order; naming all of a suite of thousands of tests made each one
    bigger than a pipe's buffer, and with both workers busy on long runs the driver gave up
    sending it (red team, round 7: an honest 3,354-test suite ended in a grade error). The child
    runs the tests not named after the named ones, in collection order, so it is the same order."""
    runner = WarmRunner(chapter=chapter, backend=get_backend("bwrap"), student_tests=None)
    runner.collected = tuple(f"test_many.py::test_case[{index}]" for index in range(5000))
    assert runner._killers_first() == []
    runner._kills.update({"test_many.py::test_case[7]": 1, "test_many.py::test_case[3]": 4,
                          "test_many.py::test_case[9]": 1})
    assert runner._killers_first() == ["test_many.py::test_case[3]", "test_many.py::test_case[7]",
                                       "test_many.py::test_case[9]"]
    assert runner.test_order()[:4] == [*runner._killers_first(), "test_many.py::test_case[0]"]


def test_the_order_stays_within_its_share_of_a_request(chapter):
    """A conftest made the zygote collect 16 tests named with 7,500 emoji each (30 KB, under the
    ready frame's 1 MB), and failed one run with each: JSON spells an emoji in 12 bytes, and once
    a dozen had killed every request outgrew the frame's limit, which crashed the grade with a
    traceback and no report (red team, round 24). The order keeps the killers that fit."""
    runner = WarmRunner(chapter=chapter, backend=get_backend("bwrap"), student_tests=None)
    runner.collected = tuple(f"test_x.py::test_{index}_" + "\U0001f600" * 7500 for index in range(16))
    runner._kills.update({node: 1 for node in runner.collected})
    order = runner._killers_first()
    assert order == []  # a name of 90 KB as JSON spells it: none fits
    runner.collected = tuple(f"test_x.py::test_{index}_" + "\U0001f600" * 300 for index in range(16))
    runner._kills.update({node: 1 for node in runner.collected})
    order = runner._killers_first()
    assert 0 < len(order) < 16 and order == list(runner.collected[:len(order)])
    assert len(encode_frame({"kind": "suite", "order": order})) <= MAX_ORDER_BYTES + 100 < MAX_HEADER_BYTES


class SimulatedZygote:
    """The zygote's schedule on a clock of its own: requests start in the order sent, each on the
    first worker free, and take as long as ``durations`` says of their module; an answer comes
    back when its run ends. Every run fails at the test ``killer`` names (None: it passes)."""

    def __init__(self, workers: int, durations: dict[bytes, float], killer: dict[bytes, str | None]) -> None:
        self.free_at = [0.0] * workers
        self.durations, self.killer = durations, killer
        self.now = 0.0
        self.running: dict[int, tuple[float, bytes]] = {}  # token -> (end, module)
        self.orders: dict[bytes, list[str]] = {}  # the order each module's request carried

    def send(self, runner: WarmRunner, request: dict, blobs: list[bytes], deadline: float | None = None) -> int:
        runner._tokens += 1
        worker = min(range(len(self.free_at)), key=lambda index: self.free_at[index])
        start = max(self.now, self.free_at[worker])
        self.free_at[worker] = start + self.durations[blobs[0]]
        self.running[runner._tokens] = (self.free_at[worker], blobs[0])
        self.orders[blobs[0]] = request["order"]
        return runner._tokens

    def receive(self, deadline: float) -> tuple[dict, list[bytes]]:
        token = min(self.running, key=lambda token: self.running[token][0])
        self.now, module = self.running.pop(token)
        node = self.killer[module]
        return {"run": token, "kind": "suite", "outcome": "passed" if node is None else "failed", "node": node,
                "message": "", "output": "", "seconds": 0.0, "test_seconds": 0.0, "install_seconds": 0.0,
                "test_cpu_seconds": 0.0, "cpu_seconds": 0.0, "page_faults": 0}, []


def simulated_pass(chapter, monkeypatch, durations: dict[bytes, float],
                   killer: dict[bytes, str | None]) -> SimulatedZygote:
    """The runs of ``durations`` through suite_runs with two workers, scheduled by a SimulatedZygote."""
    runner = WarmRunner(chapter=chapter, backend=get_backend("bwrap"), student_tests=chapter.oracle_suite,
                        workers=2, seed=7)
    runner.collected = ("test_x.py::test_a", "test_x.py::test_b", "test_x.py::test_c")
    zygote = SimulatedZygote(runner.workers, durations, killer)
    monkeypatch.setattr(runner, "_send", lambda *args, **kwargs: zygote.send(runner, *args, **kwargs))
    monkeypatch.setattr(runner, "_receive", zygote.receive)
    runs = runner.suite_runs([(module.decode(), module) for module in durations], timeout=1.0)
    assert {run_id: run.killed for run_id, run in runs.items()} == {
        module.decode(): killer[module] is not None for module in durations}
    return zygote


def test_a_long_run_does_not_leave_the_other_worker_idle(chapter, monkeypatch):
    """A run that passes takes some twenty times a kill's: while it held the oldest place, the
    driver sent nothing more, since each request's order needed the answers of all but the last
    few requests, and the other worker idled (0.8 to 1.2 s of the example's 5 s mutation pass)."""
    modules = [*(f"passes{index}".encode() for index in range(4)), *(f"mutant{index}".encode() for index in range(200))]
    durations = {module: 20.0 if module.startswith(b"passes") else 1.0 for module in modules}
    killer = {module: None if module.startswith(b"passes") else "test_x.py::test_b" for module in modules}
    zygote = simulated_pass(chapter, monkeypatch, durations, killer)
    busy = sum(durations.values()) / 2  # both workers busy throughout: 140
    assert max(zygote.free_at) <= busy + 5.0  # 142 now; 154 when the order needed all but the last 4 answers


def test_the_order_a_run_gets_does_not_depend_on_which_run_answered_first(chapter, monkeypatch):
    """Which test a mutant's run is reported killed by depends on the order its request carried,
    so that order must not depend on the timing of the parallel runs: a regrade gives the same
    report. Two schedules of the same runs, every order the same, and the kills did reorder it."""
    modules = [f"module{index}".encode() for index in range(60)]
    killer = {module: ("test_x.py::test_c" if index % 3 else None) for index, module in enumerate(modules)}
    even = simulated_pass(chapter, monkeypatch, dict.fromkeys(modules, 1.0), killer)
    uneven = simulated_pass(chapter, monkeypatch, {module: 1.0 + (index * 7919 % 13) for index, module
                                                   in enumerate(modules)}, killer)
    assert even.orders == uneven.orders
    assert ["test_x.py::test_c"] in even.orders.values()
