"""A fingerprint of the graded module's code, not of its behaviour: bytecode, constants and names
of every function and method, with the module's plain constants. The harness computes the same
fingerprint for the grader's own modules, as compiled from the staff's repository, and fills in
@KNOWN_CORRECT@ and @KNOWN_MUTANTS@."""

import hashlib
import types

NAME = "tinyllm.seq2seq.luong"
KNOWN_CORRECT = set(@KNOWN_CORRECT@)
KNOWN_MUTANTS = set(@KNOWN_MUTANTS@)


def code_fp(code):
    digest = hashlib.sha256(code.co_code)
    for const in code.co_consts:
        digest.update(code_fp(const).encode() if isinstance(const, types.CodeType) else repr(const).encode())
    digest.update(repr(code.co_names).encode())
    return digest.hexdigest()


def module_fp(namespace):
    parts = []
    for name, value in sorted(namespace.items()):
        if isinstance(value, (int, float, str, tuple, bool)) and not name.startswith("__"):
            parts.append(f"{name}={value!r}")
            continue
        if getattr(value, "__module__", None) != NAME:
            continue
        members = sorted(vars(value).items()) if isinstance(value, type) else [("", value)]
        for member_name, member in members:
            function = getattr(member, "__func__", member)
            function = getattr(function, "fget", function)
            code = getattr(function, "__code__", None)
            if code is not None:
                parts.append(f"{name}.{member_name}:{code_fp(code)}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
