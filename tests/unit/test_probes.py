"""Trusted probes: the comparison logic, run here on trusted modules (the sandbox is tested elsewhere)."""

from __future__ import annotations

import tomllib

import numpy as np
import pytest

from grader import probes
from grader.chapter import load_chapter
from grader.grading import load_trusted_module
from grader.patches import apply_patch

CHAPTER = load_chapter("L4.3")
REFERENCE_SOURCE = CHAPTER.reference_impl.read_text(encoding="utf-8")
REFERENCE = load_trusted_module(CHAPTER, "reference", REFERENCE_SOURCE.encode())
ROWS = tomllib.loads(CHAPTER.pitfalls.read_text(encoding="utf-8"))["mutants"]
WAYS = {row["id"]: [row["patch"], *row.get("recognisers", [])] for row in ROWS}


def module_from_patch(name: str, patch_name: str):
    patch = (CHAPTER.pitfalls.parent / patch_name).read_text(encoding="utf-8")
    return load_trusted_module(CHAPTER, name, apply_patch(REFERENCE_SOURCE, patch).encode())


@pytest.fixture(scope="module")
def payload() -> bytes:
    return probes.draw_cases(20261129, REFERENCE)


@pytest.fixture(scope="module")
def pitfall_outputs(payload):
    return {
        pitfall: [probes.outputs_of(module_from_patch(f"{pitfall}_{i}", p), payload) for i, p in enumerate(patches)]
        for pitfall, patches in WAYS.items()
    }


def test_cases_are_deterministic_per_seed_and_differ_between_seeds(payload):
    assert probes.draw_cases(20261129, REFERENCE) == payload
    assert probes.draw_cases(1, REFERENCE) != payload


def test_cases_cover_every_score_with_padded_and_empty_rows(payload):
    cases = probes.read_answer(payload)
    assert [str(cases[f"case{i}.score"]) for i in range(3)] == list(probes.SCORES)
    for i in range(3):
        rows = cases[f"case{i}.mask"].sum(axis=1)
        assert cases[f"case{i}.mask"].dtype == bool
        assert rows[0] == cases[f"case{i}.mask"].shape[1] and rows[-1] == 0 and 0 < rows[1] < rows[0]


def test_the_reference_and_a_differently_written_variant_agree(payload):
    reference = probes.outputs_of(REFERENCE, payload)
    variant = load_trusted_module(CHAPTER, "variant", CHAPTER.variants[0].read_bytes())
    asked = []
    verdict = probes.judge(probes.outputs_of(variant, payload), reference, lambda: asked.append(1) or {})
    assert verdict == probes.ProbeVerdict(agree=True, disagreements=(), behaves_like=())
    assert not asked  # an implementation that agrees is not run through the pitfall recognisers


@pytest.mark.parametrize(("pitfall", "patch"), [(p, patch) for p, ways in WAYS.items() for patch in ways])
def test_every_way_into_a_pitfall_is_named(pitfall, patch, payload, pitfall_outputs):
    student = probes.outputs_of(module_from_patch(f"student_{pitfall}", patch), payload)
    verdict = probes.judge(student, probes.outputs_of(REFERENCE, payload), lambda: pitfall_outputs)
    assert not verdict.agree
    assert verdict.behaves_like == (pitfall,)


def test_two_pitfalls_in_different_scores_are_both_named(payload, pitfall_outputs):
    patches = [(CHAPTER.pitfalls.parent / name).read_text(encoding="utf-8")
               for name in ("pitfalls/s03.patch", "pitfalls/s07-dot-only.patch")]
    source = apply_patch(apply_patch(REFERENCE_SOURCE, patches[0]), patches[1])
    student = probes.outputs_of(load_trusted_module(CHAPTER, "student_s03_s07", source.encode()), payload)
    verdict = probes.judge(student, probes.outputs_of(REFERENCE, payload), lambda: pitfall_outputs)
    assert verdict.behaves_like == ("s03", "s07")


def test_an_implementation_that_raises_is_described(payload, pitfall_outputs):
    source = REFERENCE_SOURCE.replace('    def attentional(self, query: Tensor, context: Tensor) -> Tensor:\n',
                                      '    def attentional(self, query: Tensor, context: Tensor) -> Tensor:\n'
                                      '        raise RuntimeError("not written yet")\n')
    student = probes.outputs_of(load_trusted_module(CHAPTER, "raises", source.encode()), payload)
    verdict = probes.judge(student, probes.outputs_of(REFERENCE, payload), lambda: pitfall_outputs)
    labels = [*probes.SCORES, *(f"{s} in float32" for s in probes.SCORES)]
    assert verdict.disagreements == tuple(f"{label}: the implementation raised RuntimeError: not written yet"
                                          for label in labels)
    assert verdict.behaves_like == ()


def test_nan_and_wrong_shapes_are_named(payload):
    reference = probes.outputs_of(REFERENCE, payload)
    student = dict(reference)
    student["case0.context"] = np.full_like(reference["case0.context"], np.nan)
    student["case1.weights"] = reference["case1.weights"][:, :-1]
    verdict = probes.judge(student, reference, dict)
    assert verdict.disagreements == ("dot: NaN or inf in: context", "general: wrong shape or missing: weights")


def test_answers_are_read_without_pickle():
    import io

    buffer = io.BytesIO()
    np.savez(buffer, evil=np.array([object()], dtype=object))
    with pytest.raises(ValueError):
        probes.read_answer(buffer.getvalue())


def test_compressed_answers_are_refused_before_they_inflate():
    import io

    buffer = io.BytesIO()
    np.savez_compressed(buffer, zeros=np.zeros(8 << 20))  # 64 MiB of zeros in a few dozen kB
    assert len(buffer.getvalue()) < 1 << 20
    with pytest.raises(ValueError, match="compressed arrays are refused: zeros.npy"):
        probes.read_answer(buffer.getvalue())
    with pytest.raises(ValueError, match="not a readable npz archive"):
        probes.read_answer(b"PK\x03\x04 not really a zip")


def _described(payload: bytes, name: str, old: str, new: str) -> tuple[str, ...]:
    """The probes' disagreements for the reference with ``old`` replaced by ``new``."""
    assert old in REFERENCE_SOURCE
    module = load_trusted_module(CHAPTER, name, REFERENCE_SOURCE.replace(old, new).encode())
    verdict = probes.judge(probes.outputs_of(module, payload), probes.outputs_of(REFERENCE, payload), dict)
    assert not verdict.agree
    return verdict.disagreements


def test_a_module_that_accepts_an_unknown_score_is_named(payload):
    lines = _described(payload, "no_score_check", "        if score not in SCORES:\n            raise ValueError",
                       "        if False:\n            raise ValueError")
    assert len(lines) == 1 and lines[0].startswith("contract: 2 of ")
    assert "should give ValueError naming the score, gave returned" in lines[0]


def test_a_module_that_accepts_a_wrong_mask_is_named(payload):
    lines = _described(payload, "no_mask_check", "        check_mask(mask, *self._check_inputs(query, keys))",
                       "        self._check_inputs(query, keys)")
    assert len(lines) == 1 and "validation calls differ" in lines[0]
    assert "should give ValueError naming the mask, gave" in lines[0]


def test_the_contract_names_parameters_and_query_from(payload):
    lines = _described(payload, "previous", 'query_from = "current"', 'query_from = "previous"')
    assert lines == ("contract: query_from: \"class 'previous'\" (should be \"class 'current'\"), \"dot 'previous'\" "
                     "(should be \"dot 'current'\"), \"general 'previous'\" (should be \"general 'current'\") and 1 more",)
    lines = _described(payload, "float64_by_default", "        self.combine = Linear(2 * d, d, bias=False, rng=rng)\n",
                       "        self.combine = Linear(2 * d, d, bias=False, rng=rng)\n        self.to(np.float64)\n")
    assert len(lines) == 1 and lines[0].startswith("contract: parameters: 'dot: combine.weight (")
    assert "float64' (should be 'dot: combine.weight" in lines[0] and "float32')" in lines[0]


def test_float32_is_checked_as_well_as_float64(payload):
    old = "        return F.tanh(self.combine(F.cat([context, query], axis=-1)))"
    lines = _described(payload, "float64_attentional", old, old.replace("return ", "out = ") + "\n"
                       "        return Tensor(out.data.astype(np.float64)) if out.data.dtype == np.float32 else out")
    # float64 agrees; in float32 the wrong dtype surfaces (tinyllm refuses to mix dtypes downstream)
    assert [line.partition(":")[0] for line in lines] == [f"{s} in float32" for s in probes.SCORES]


def test_padding_must_be_exactly_zero_not_just_close(payload):
    lines = _described(payload, "almost_zero", "    return F.masked_fill(weights, empty, 0.0)",
                       "    return F.masked_fill(weights, empty, 0.0) + Tensor(np.where(mask, 0.0, 1e-12).astype(weights.data.dtype))")
    assert lines and all("not exactly 0 where it must be: " in line for line in lines)
