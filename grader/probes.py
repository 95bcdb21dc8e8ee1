"""Trusted probes: the grader's own check of an implementation, independent of any test's say-so.

The course tests run in the same process as the student's code, so a hostile ``luong.py`` could
make them report anything. Probes cannot be talked into a pass: the grader draws the inputs
(deterministically from the submission's hash, so a regrade sees the same numbers but nobody can
know them in advance), the student's module computes outputs and gradients inside the sandbox,
and the arrays are compared here with the reference and with each pitfall mutant.
"""

from __future__ import annotations

import io
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
          mutants: dict[str, dict[str, np.ndarray]]) -> ProbeVerdict:
    """Compare the student's arrays with the reference's, and name the pitfalls they reproduce."""
    disagreements = tuple(_describe(key, student, reference) for key in _differing(student, reference))
    behaves_like = () if not disagreements else tuple(
        pitfall for pitfall, outputs in sorted(mutants.items()) if _reproduces(student, reference, outputs)
    )
    return ProbeVerdict(agree=not disagreements, disagreements=disagreements, behaves_like=behaves_like)


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None or a.dtype.kind not in "fiub" or b.dtype.kind not in "fiub" or a.shape != b.shape:
        return False
    return bool(np.all(np.isfinite(a) == np.isfinite(b)) and np.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True))


def _differing(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> list[str]:
    keys = sorted(set(expected) | {k for k in actual if k.endswith(".error")})
    return [k for k in keys if not _same(actual.get(k), expected.get(k))]


def _reproduces(student, reference, mutant) -> bool:
    """The mutant differs from the reference somewhere, and the student matches the mutant there."""
    changed = _differing(mutant, reference)
    return bool(changed) and all(_same(student.get(k), mutant.get(k)) for k in changed)


def _describe(key: str, student: dict[str, np.ndarray], reference: dict[str, np.ndarray]) -> str:
    case, _, output = key.partition(".")
    score = SCORES[int(case.removeprefix("case"))]
    got = student.get(key)
    if output == "error":
        return f"{score}: the implementation raised {str(got)[:200]}"
    if got is None:
        error = student.get(f"{case}.error")
        return f"{score}: no {output} ({'raised ' + str(error)[:200] if error is not None else 'missing'})"
    want = reference[key]
    if got.shape != want.shape:
        return f"{score}: {output} has shape {got.shape}, expected {want.shape}"
    if not np.all(np.isfinite(got)):
        return f"{score}: {output} has NaN or infinite values where the reference has none"
    return f"{score}: {output} differs from the reference (max abs difference {np.max(np.abs(got - want)):.3g})"
