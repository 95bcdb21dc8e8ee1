"""Trusted probes: the grader's own check of an implementation, independent of any test's say-so.

The course tests run in the same process as the student's code, so a hostile ``luong.py`` could
make them report anything. Probes cannot be talked into a pass: the grader draws the inputs
(deterministically from the submission's hash, so a regrade sees the same numbers but nobody can
know them in advance), the student's module computes outputs and gradients inside the sandbox,
and the arrays are compared here with the reference and with each pitfall mutant.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from grader.runner.inside import probe as probe_executor

SCORES = ("dot", "general", "concat")
RTOL, ATOL = 1e-6, 1e-9


@dataclass(frozen=True)
class ProbeVerdict:
    agree: bool
    disagreements: tuple[str, ...]
    behaves_like: tuple[str, ...]


def draw_cases(seed: int, reference) -> bytes:
    """One float64 case per score, rows full, padded, padded and empty; the parameters get the
    names and shapes the ``reference`` module gives them at the drawn width."""
    rng = np.random.default_rng(seed)
    fields: dict[str, np.ndarray] = {}
    for index, score in enumerate(SCORES):
        d = int(rng.integers(3, 6))
        batch, length = 4, 5
        lengths = np.array([length, int(rng.integers(2, length)), int(rng.integers(1, length)), 0])
        case = {
            "d": np.array(d),
            "score": np.array(score),
            "query": rng.normal(size=(batch, d)),
            "keys": rng.normal(size=(batch, length, d)),
            "mask": np.arange(length)[None, :] < lengths[:, None],
            "up_context": rng.normal(size=(batch, d)),
            "up_weights": rng.normal(size=(batch, length)),
            "up_attentional": rng.normal(size=(batch, d)),
        }
        for name, parameter in reference.LuongAttention(d, score).named_parameters():
            case[f"param:{name}"] = rng.normal(size=parameter.shape) / np.sqrt(parameter.shape[-1])
        fields.update({f"case{index}.{k}": v for k, v in case.items()})
    buffer = io.BytesIO()
    np.savez(buffer, **fields)
    return buffer.getvalue()


def outputs_of(module, payload: bytes) -> dict[str, np.ndarray]:
    """Run a trusted module (the reference or a pitfall mutant) on the probe cases, here."""
    return read_answer(probe_executor.run(module, payload))


def read_answer(answer: bytes) -> dict[str, np.ndarray]:
    """Parse an answer that came out of the sandbox: plain arrays only, never objects."""
    with np.load(io.BytesIO(answer), allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}


def judge(student: dict[str, np.ndarray], reference: dict[str, np.ndarray],
          pitfalls: Callable[[], Mapping[str, Sequence[dict[str, np.ndarray]]]]) -> ProbeVerdict:
    """Compare the student's arrays with the reference's, and name the pitfalls they reproduce.

    ``pitfalls()`` maps an id to the outputs of each recognised way into that pitfall. It is
    called only when the student disagrees with the reference: running every recogniser costs
    the grade a tenth of a second of CPU, and an implementation that agrees reproduces none."""
    disagreements = tuple(
        line for case in _cases(reference) if (line := _describe_case(case, student, reference)) is not None
    )
    behaves_like = () if not disagreements else tuple(
        pitfall for pitfall, ways in sorted(pitfalls().items())
        if any(_reproduces(student, reference, outputs) for outputs in ways)
    )
    return ProbeVerdict(agree=not disagreements, disagreements=disagreements, behaves_like=behaves_like)


def _cases(outputs: dict[str, np.ndarray]) -> list[str]:
    return sorted({key.partition(".")[0] for key in outputs})


def _case_keys(case: str, outputs: dict[str, np.ndarray]) -> list[str]:
    return [k for k in outputs if k.startswith(case + ".")]


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None or a.dtype.kind not in "fiub" or b.dtype.kind not in "fiub" or a.shape != b.shape:
        return False
    return bool(np.all(np.isfinite(a) == np.isfinite(b)) and np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))


def _reproduces(student, reference, mutant) -> bool:
    """In some case (one score) where the student differs from the reference, the student's every
    output equals the mutant's: the pitfall is recognised even beside an unrelated bug elsewhere."""
    for case in _cases(reference):
        keys = _case_keys(case, reference)
        differs = any(not _same(student.get(k), reference[k]) for k in keys)
        if differs and all(_same(student.get(k), mutant.get(k)) for k in keys):
            return True
    return False


def _describe_case(case: str, student: dict[str, np.ndarray], reference: dict[str, np.ndarray]) -> str | None:
    """One line for a case (a score) whose outputs differ, naming them in the order they flow."""
    score = SCORES[int(case.removeprefix("case"))]
    error = student.get(f"{case}.error")
    if error is not None:
        return f"{score}: the implementation raised {str(error)[:200]}"
    wrong = [k for k in _case_keys(case, reference) if not _same(student.get(k), reference[k])]
    if not wrong:
        return None
    names = [k.partition(".")[2] for k in wrong]
    problems = []
    shapes = [n for n, k in zip(names, wrong) if student.get(k) is None or student[k].shape != reference[k].shape]
    if shapes:
        problems.append(f"wrong shape or missing: {', '.join(shapes)}")
    nonfinite = [n for n, k in zip(names, wrong) if n not in shapes and not np.all(np.isfinite(student[k]))]
    if nonfinite:
        problems.append(f"NaN or inf in: {', '.join(nonfinite)}")
    numeric = [(n, k) for n, k in zip(names, wrong) if n not in shapes and n not in nonfinite]
    if numeric:
        worst = max(float(np.max(np.abs(student[k] - reference[k]))) for _, k in numeric)
        problems.append(f"differs in {', '.join(n for n, _ in numeric)} (max abs difference {worst:.3g})")
    return f"{score}: " + "; ".join(problems)
