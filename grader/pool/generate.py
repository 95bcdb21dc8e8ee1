"""Generation: every single mutant mutmut's own operators make of the reference, as full files."""

from __future__ import annotations

import difflib
import hashlib
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

# mutmut and libcst are development requirements: only the generator imports them, inside its
# functions, so the grader can load and verify a frozen pool without them.
from grader.pool.store import PATCH_LABEL


@dataclass(frozen=True)
class Candidate:
    """One generated mutant before curation."""

    id: str
    function: str  # Class.method or function enclosing the mutation
    mutmut_name: str  # what mutmut itself calls it, e.g. xǁLuongAttentionǁscores__mutmut_3
    operator: str  # the mutmut operator that made it, e.g. operator_swap_op
    line: int  # 1-based, first changed line of the reference
    column: int  # 1-based, first changed character on that line
    original: str  # the changed reference lines, stripped
    replacement: str  # the lines that replace them, stripped
    message_only: bool  # the change only reaches the text of an error message
    source: str  # the full mutated module
    patch: str


# -- generation (mutmut as a library) -------------------------------------------------------------


def _diff(reference: str, mutated: str) -> str:
    return "".join(
        difflib.unified_diff(
            reference.splitlines(keepends=True),
            mutated.splitlines(keepends=True),
            fromfile=f"a/{PATCH_LABEL}",
            tofile=f"b/{PATCH_LABEL}",
        )
    )


def _changed_region(reference: str, mutated: str) -> tuple[int, int, str, str]:
    """(line, column, original lines, replacement lines) of the one changed region, 1-based."""
    old, new = reference.splitlines(), mutated.splitlines()
    first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    room = min(len(old), len(new)) - first
    tail = next((k for k in range(room) if old[-1 - k] != new[-1 - k]), room)
    old_part, new_part = old[first : len(old) - tail], new[first : len(new) - tail]
    if old_part and new_part:
        pairs = zip(old_part[0], new_part[0])
        column = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(old_part[0]), len(new_part[0])))
    else:  # whole lines added or removed
        column = 0
    return first + 1, column + 1, "\n".join(s.strip() for s in old_part), "\n".join(s.strip() for s in new_part)


def _stable_id(function: str, operator: str, original: str, replacement: str) -> str:
    key = f"{function}\x00{operator}\x00{original}\x00{replacement}"
    return "g" + hashlib.sha256(key.encode()).hexdigest()[:8]


def _enumerate_mutations(code: str):
    """mutmut's mutations of ``code``, each with its operator's name and enclosing function.

    Mirrors ``mutmut.mutation.file_mutation.create_mutations`` but wraps each operator to record
    its name, which mutmut does not keep. Only mutations inside a function or method count:
    mutmut's trampolines skip the rest (class attributes, module statements).
    """
    import libcst as cst
    from mutmut.configuration import reset_config
    from mutmut.mutation.file_mutation import MutationVisitor
    from mutmut.mutation.mutators import mutation_operators
    from mutmut.mutation.pragma_handling import get_ignored_lines
    from mutmut.utils.file_utils import change_cwd

    made_by: dict[int, str] = {}

    def tagged(operator):
        def run(node):
            for mutated in operator(node):
                made_by[id(mutated)] = operator.__name__
                yield mutated

        return run

    with tempfile.TemporaryDirectory(prefix="mutmut-") as workdir, change_cwd(workdir):
        Path(workdir, "setup.cfg").write_text(f"[mutmut]\nsource_paths={PATCH_LABEL}\n", encoding="utf-8")
        Path(workdir, PATCH_LABEL).write_text(code, encoding="utf-8")
        reset_config()  # mutmut caches the configuration of whichever directory it first saw
        try:
            wrapper = cst.MetadataWrapper(cst.parse_module(code))
            ignored = get_ignored_lines(PATCH_LABEL, code, wrapper)
            visitor = MutationVisitor([(t, tagged(op)) for t, op in mutation_operators], ignored)
            module = wrapper.visit(visitor)
        finally:
            reset_config()
    owners = _function_names(module)
    messages = _MessageFlow(module)
    for mutation in visitor.mutations:
        owner = mutation.contained_by_top_level_function
        if isinstance(owner, cst.FunctionDef):
            yield module, mutation, made_by[id(mutation.mutated_node)], owners[owner], messages.is_message_only(mutation.original_node, mutation.mutated_node)


def _function_names(module) -> dict:
    """Each top-level function or method node -> (display name, mutmut's mangled name)."""
    import libcst as cst
    from mutmut.mutation.trampoline_templates import mangle_function_name

    names = {}
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            names[statement] = (statement.name.value, mangle_function_name(name=statement.name.value, class_name=None))
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for method in statement.body.body:
                if isinstance(method, cst.FunctionDef):
                    cls, name = statement.name.value, method.name.value
                    names[method] = (f"{cls}.{name}", mangle_function_name(name=name, class_name=cls))
    return names


def _descendants(node) -> set[int]:
    found, stack = set(), [node]
    while stack:
        current = stack.pop()
        found.add(id(current))
        stack.extend(current.children)
    return found


class _MessageFlow:
    """Which code only feeds the text of an error message, found by a small dataflow pass.

    Message code is: the arguments of ``raise SomeError(...)``; a local assigned only to be used
    there (``got = ...``); a parameter of a module function used only there, and the arguments
    passed to it (``_check_tensor("query", ...)``). A mutant confined to message code that no test
    kills changes what an error says, not whether or which error is raised. (Only survivors are
    classified, so message code that could itself raise is still put to the tests.)
    """

    def __init__(self, module) -> None:
        import libcst as cst

        self.nodes: set[int] = set()
        functions = [s for s in module.body if isinstance(s, cst.FunctionDef)]
        for cls in (s for s in module.body if isinstance(s, cst.ClassDef) and isinstance(s.body, cst.IndentedBlock)):
            functions += [m for m in cls.body.body if isinstance(m, cst.FunctionDef)]
        for raise_node in _all(module, cst.Raise):
            if isinstance(raise_node.exc, cst.Call):
                self.nodes |= _descendants(raise_node.exc)
        self.params: dict[str, dict] = {}  # function -> {message parameter: position}
        for function in functions:
            for assign in _all(function, cst.Assign):
                target = assign.targets[0].target
                if len(assign.targets) == 1 and isinstance(target, cst.Name) and self._only_in_message(function, target.value, assign):
                    self.nodes |= _descendants(assign)
        for function in (f for f in functions if f in module.body):
            names = [p.name.value for p in function.params.params]
            self.params[function.name.value] = {n: i for i, n in enumerate(names) if self._only_in_message(function, n)}
        for call in _all(module, cst.Call):
            for _, arg in self._message_args(call):
                self.nodes |= _descendants(arg.value)

    def _only_in_message(self, function, name: str, defined_by=None) -> bool:
        import libcst as cst

        skip = _descendants(defined_by.targets[0]) if defined_by is not None else set()
        for comprehension in _all(function.body, (cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp)):
            if any(n.value == name for n in _all(comprehension.for_in.target, cst.Name)):
                skip |= _descendants(comprehension)  # its own scope: the name means something else
        uses = [n for n in _all(function.body, cst.Name) if n.value == name and id(n) not in skip]
        return bool(uses) and all(id(n) in self.nodes for n in uses)

    def _message_args(self, call):
        import libcst as cst

        wanted = self.params.get(call.func.value, {}) if isinstance(call.func, cst.Name) else {}
        for index, arg in enumerate(call.args):
            if (arg.keyword.value if arg.keyword else None) in wanted or (not arg.keyword and index in wanted.values()):
                yield index, arg

    def is_message_only(self, original, mutated) -> bool:
        import libcst as cst

        if id(original) in self.nodes:
            return True
        if not (isinstance(original, cst.Call) and isinstance(mutated, cst.Call) and len(original.args) == len(mutated.args)):
            return False
        changed = {i for i, (a, b) in enumerate(zip(original.args, mutated.args)) if not a.deep_equals(b)}
        return bool(changed) and changed <= {i for i, _ in self._message_args(original)}


def _all(node, kind) -> list:
    import libcst as cst

    found = []

    class Collector(cst.CSTVisitor):
        def on_visit(self, current) -> bool:
            if isinstance(current, kind):
                found.append(current)
            return True

    node.visit(Collector())
    return found


def _with_statement_replaced(module, old, new):
    """``module`` with one top-level function or method swapped, sharing every other node.

    Replacing inside the function alone and rebuilding only its parents is what keeps
    enumerating hundreds of mutants fast; a deep replace over the whole module is not.
    """
    import libcst as cst

    def swap(statements):
        return [new if statement is old else statement for statement in statements]

    body = []  # classes with a one-line body hold no methods: mutmut never mutates them
    for statement in module.body:
        inner = statement.body.body if isinstance(statement, cst.ClassDef) else ()
        if any(method is old for method in inner):
            statement = statement.with_changes(body=statement.body.with_changes(body=swap(statement.body.body)))
        body.append(statement)
    return module.with_changes(body=swap(body))


def generate(reference: str) -> list[Candidate]:
    """Every single-mutation variant of ``reference``, with stable ids (suffixed on collisions)."""
    from mutmut.mutation.file_mutation import deep_replace

    candidates: list[Candidate] = []
    seen: Counter = Counter()
    per_function: Counter = Counter()
    for module, mutation, operator, (function, mangled), message_only in _enumerate_mutations(reference):
        per_function[mangled] += 1
        owner = mutation.contained_by_top_level_function
        mutated_owner = deep_replace(owner, mutation.original_node, mutation.mutated_node)
        source = _with_statement_replaced(module, owner, mutated_owner).code
        line, column, original, replacement = _changed_region(reference, source)
        base = _stable_id(function, operator, original, replacement)
        seen[base] += 1
        mutant_id = base if seen[base] == 1 else f"{base}-{seen[base]}"
        candidates.append(
            Candidate(
                id=mutant_id,
                function=function,
                mutmut_name=f"{mangled}__mutmut_{per_function[mangled]}",
                operator=operator,
                line=line,
                column=column,
                original=original,
                replacement=replacement,
                message_only=message_only,
                source=source,
                patch=_diff(reference, source),
            )
        )
    return candidates


