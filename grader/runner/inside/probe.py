"""Probe executor: run one implementation on given inputs and return its outputs and gradients.

Runs inside the sandbox on the student's module, and in the trusted grader on the reference and
the pitfall mutants, so both sides compute exactly the same quantities. Only numpy's npz format
crosses the boundary (loaded with allow_pickle=False on both sides). Standard library, numpy and
the tinyllm substrate only: the grader package is not visible inside the sandbox.
"""

from __future__ import annotations

import io

import numpy as np

# IMPORTANT: the key layout here is read by grader/probes.py; keep the two in step.
OUTPUTS = ("context", "weights", "attentional", "scores", "context_with_proj", "grad_query", "grad_keys")
MAX_ERROR_CHARS = 300


def run(module, payload: bytes) -> bytes:
    """``payload`` is an npz of cases ``case<i>.<field>``; the answer is an npz of ``case<i>.<output>``."""
    cases = _split_cases(np.load(io.BytesIO(payload), allow_pickle=False))
    answer: dict[str, np.ndarray] = {}
    for index, case in sorted(cases.items()):
        try:
            outputs = _run_case(module, case)
        except Exception as exc:  # the implementation under test may raise anything
            outputs = {"error": np.array(f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS])}
        answer.update({f"case{index}.{key}": value for key, value in outputs.items()})
    buffer = io.BytesIO()
    np.savez(buffer, **answer)
    return buffer.getvalue()


def _split_cases(archive) -> dict[int, dict[str, np.ndarray]]:
    cases: dict[int, dict[str, np.ndarray]] = {}
    for key in archive.files:
        head, _, field = key.partition(".")
        cases.setdefault(int(head.removeprefix("case")), {})[field] = archive[key]
    return cases


def _run_case(module, case: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    from tinyllm.autograd.tensor import Tensor

    attention = module.LuongAttention(int(case["d"]), str(case["score"]))
    attention.to(np.float64)
    weights = {k.removeprefix("param:"): v for k, v in case.items() if k.startswith("param:")}
    attention.load_state_dict(weights)
    query = Tensor(case["query"], requires_grad=True)
    keys = Tensor(case["keys"], requires_grad=True)
    context, attn_weights = attention.forward(query, keys, case["mask"])
    attentional = attention.attentional(query, context)
    loss = (
        (context * Tensor(case["up_context"])).sum()
        + (attn_weights * Tensor(case["up_weights"])).sum()
        + (attentional * Tensor(case["up_attentional"])).sum()
    )
    loss.backward()
    detached_query, detached_keys = Tensor(case["query"]), Tensor(case["keys"])
    proj = attention.project_keys(detached_keys)
    context_with_proj, _ = attention.forward(detached_query, detached_keys, case["mask"], proj=proj)
    outputs = {
        "context": context.data,
        "weights": attn_weights.data,
        "attentional": attentional.data,
        "scores": attention.scores(detached_query, detached_keys).data,
        "context_with_proj": context_with_proj.data,
        "grad_query": query.grad,
        "grad_keys": keys.grad,
    }
    for name, parameter in attention.named_parameters():
        outputs[f"grad:{name}"] = parameter.grad
    return {k: np.asarray(v if v is not None else np.nan, dtype=np.float64) for k, v in outputs.items()}
