"""A fingerprint of each function of the graded module's code that the grader's disguise does not
move (red team, round 9): bytecode with the disguise's dead stores (an int stored to a local no
one loads) dropped, and line numbers and jump offsets ignored. One byte a function."""
import dis
import hashlib
import types


def _normalised(code):
    instructions = list(dis.get_instructions(code))
    loaded = {i.argval for i in instructions if i.opname.startswith("LOAD_FAST") or i.opname == "LOAD_CLOSURE"}
    stores = [k for k, i in enumerate(instructions)
              if i.opname == "STORE_FAST" and k > 0 and instructions[k - 1].opname == "LOAD_CONST"
              and type(instructions[k - 1].argval) is int and i.argval not in loaded]
    dead = {*stores, *(k - 1 for k in stores)}
    return tuple((i.opname, _normalised(i.argval)) if isinstance(i.argval, types.CodeType)
                 else (i.opname,) if i.opcode in dis.hasjrel or i.opcode in dis.hasjabs
                 else (i.opname, repr(i.argval))
                 for k, i in enumerate(instructions) if k not in dead)


def table(namespace, name):
    codes = {}
    for key, value in sorted(namespace.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == name:
            codes[key] = value.__code__
        elif isinstance(value, type) and value.__module__ == name:
            codes.update((f"{key}.{attr}", getattr(member, "__func__", member).__code__)
                         for attr, member in sorted(vars(value).items())
                         if isinstance(getattr(member, "__func__", member), types.FunctionType))
    return {key: hashlib.sha256(repr(_normalised(code)).encode()).digest()[0] for key, code in codes.items()}
