"""python/tandem.pyi, the stub editors and type checkers read, in step with the module: every public name
(functions, classes, attributes, Engine's methods and properties) in both, the exception classes with
the module's bases, and each function's parameters (names, positional or keyword-only, defaults) equal
to those of the pybind11 signature line that begins its __doc__. The checker itself is tested on a stub
made from the module's own signatures, and on that stub broken in each way it must notice."""
import ast
import inspect
import pathlib

import pytest

import tandem

SOURCE_STUB = pathlib.Path(__file__).parents[2] / "python" / "tandem.pyi"
NO_DEFAULT = object()


def parameters(fn):
    """[(name, kind, default)] of an ast function definition, without self; kind is 'positional',
    'keyword-only', '*args' or '**kwargs'; a default as its literal value (NO_DEFAULT: none; the source
    text where it is no literal)."""
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults = [NO_DEFAULT] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out = []

    def value(node):
        if node is NO_DEFAULT or node is None:
            return NO_DEFAULT
        try:
            return ast.literal_eval(node)
        except ValueError:
            return ast.unparse(node)

    for arg, d in zip(positional, defaults):
        out.append((arg.arg, "positional", value(d)))
    if a.vararg:
        out.append((a.vararg.arg, "*args", NO_DEFAULT))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, "keyword-only", value(d)))
    if a.kwarg:
        out.append((a.kwarg.arg, "**kwargs", NO_DEFAULT))
    if out and out[0][0] == "self":
        out = out[1:]
    return out


def pybind_signature(obj):
    """The parameters of the signature line pybind11 puts first in a function's __doc__, e.g.
    "sum(self: tandem.Engine, x: object, axis: object = None, ...) -> object"; None if there is none."""
    doc = getattr(obj, "__doc__", None) or ""
    line = doc.splitlines()[0] if doc else ""
    try:
        tree = ast.parse("def " + line + ": ...")
    except SyntaxError:
        return None
    return parameters(tree.body[0])


def shown(params):
    """The parameters as Python writes them: "(x, axis=None, *, kernel='auto')"."""
    parts, star = [], False
    for name, kind, default in params:
        if kind == "keyword-only" and not star:
            parts.append("*")
        star = star or kind in ("keyword-only", "*args")
        prefix = {"*args": "*", "**kwargs": "**"}.get(kind, "")
        parts.append(prefix + name + ("" if default is NO_DEFAULT else f"={default!r}"))
    return "(" + ", ".join(parts) + ")"


def same_parameters(a, b):
    """Equal names, kinds and defaults (defaults compared by value and type: 1.0 is not 1, False not 0)."""
    return len(a) == len(b) and all(
        x[0] == y[0] and x[1] == y[1] and (x[2] is y[2] or (x[2] == y[2] and type(x[2]) is type(y[2])))
        for x, y in zip(a, b))


def public(name):
    return not name.startswith("_") or name in ("__version__", "__init__")


def stub_tables(source):
    """What a stub declares: {name: node} at module level, and per class {name: node}."""
    tree = ast.parse(source)
    top, classes = {}, {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    top[t.id] = node
        if isinstance(node, ast.ClassDef):
            members = {}
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    members[item.name] = item
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members[item.target.id] = item
            classes[node.name] = members
    return top, classes


def is_property(node):
    return isinstance(node, ast.FunctionDef) and any(
        isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)


def stub_differences(source, module):
    """Every difference between a stub's text and the module, one line each."""
    diffs = []
    top, classes = stub_tables(source)
    names = {n for n in dir(module) if public(n)}
    stub_names = {n for n in top if public(n)}
    for n in sorted(names - stub_names):
        diffs.append(f"tandem.{n} is not in the stub")
    for n in sorted(stub_names - names):
        diffs.append(f"the stub declares tandem.{n}, which the module does not have")
    for n in sorted(names & stub_names):
        obj, node = getattr(module, n), top[n]
        if inspect.isclass(obj):
            if not isinstance(node, ast.ClassDef):
                diffs.append(f"tandem.{n} is a class; the stub declares it otherwise")
                continue
            if issubclass(obj, BaseException):
                want = [b.__name__ for b in obj.__bases__]
                got = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                if want != got:
                    diffs.append(f"tandem.{n}'s bases are {want}; the stub's {got}")
                continue
            members = {m for m in vars(obj) if public(m)}
            stub_members = {m for m in classes[n] if public(m)}
            for m in sorted(members - stub_members):
                diffs.append(f"tandem.{n}.{m} is not in the stub")
            for m in sorted(stub_members - members):
                diffs.append(f"the stub declares tandem.{n}.{m}, which the module does not have")
            for m in sorted(members & stub_members):
                attr, snode = vars(obj)[m], classes[n][m]
                if isinstance(attr, property) != is_property(snode):
                    where = "the module" if isinstance(attr, property) else "the stub"
                    diffs.append(f"tandem.{n}.{m}: a property in {where} only")
                    continue
                if isinstance(attr, property) or not isinstance(snode, ast.FunctionDef):
                    continue
                diffs.extend(signature_differences(f"tandem.{n}.{m}", attr, snode))
        elif callable(obj):
            if not isinstance(node, ast.FunctionDef):
                diffs.append(f"tandem.{n} is a function; the stub declares it otherwise")
                continue
            diffs.extend(signature_differences(f"tandem.{n}", obj, node))
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            diffs.append(f"tandem.{n} is an attribute ({type(obj).__name__}); the stub declares a "
                         f"{'function' if isinstance(node, ast.FunctionDef) else 'class'}")
    return diffs


def signature_differences(name, obj, node):
    module_params = pybind_signature(obj)
    if module_params is None:
        return [f"{name}: its __doc__ begins with no signature line"]
    stub_params = parameters(node)
    if same_parameters(module_params, stub_params):
        return []
    return [f"{name}: the module has {shown(module_params)}, the stub {shown(stub_params)}"]


def test_stub_in_step_with_the_module():
    diffs = stub_differences(SOURCE_STUB.read_text(), tandem)
    assert not diffs, f"python/tandem.pyi differs from the module in {len(diffs)} ways:\n" + "\n".join(diffs)


def test_stub_beside_the_module_is_the_source():
    """The build (and the wheel) put a copy beside the module: the same text as python/tandem.pyi."""
    beside = pathlib.Path(tandem.__file__).parent / "tandem.pyi"
    if not beside.exists():
        pytest.skip(f"no tandem.pyi beside {tandem.__file__}")
    assert beside.read_text() == SOURCE_STUB.read_text(), (
        f"{beside} is not python/tandem.pyi: build again (CMake copies it)")


# The checker's own tests: a stub written from the module's signature lines has no difference; each way
# of breaking it is found.


def stub_from_module(module):
    lines = ["from typing import Any, List, Optional", ""]
    for n in sorted(dir(module)):
        if not public(n):
            continue
        obj = getattr(module, n)
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            bases = ", ".join(b.__name__ for b in obj.__bases__)
            lines += [f"class {n}({bases}): ...", ""]
        elif inspect.isclass(obj):
            lines.append(f"class {n}:")
            for m, attr in vars(obj).items():
                if not public(m):
                    continue
                if isinstance(attr, property):
                    lines += ["    @property", f"    def {m}(self) -> Any: ..."]
                else:
                    lines.append("    def " + attr.__doc__.splitlines()[0].replace("tandem.Engine", "Any") + ": ...")
            lines.append("")
        elif callable(obj):
            lines.append("def " + obj.__doc__.splitlines()[0] + ": ...")
        else:
            lines.append(f"{n}: Any")
    return "\n".join(lines) + "\n"


def test_the_checker_finds_each_difference():
    good = stub_from_module(tandem)
    assert stub_differences(good, tandem) == []
    breakages = {
        "a default changed": ("kernel: str = 'auto', deterministic: bool = False) -> object: ...",
                              "kernel: str = 'auto', deterministic: bool = True) -> object: ...", "deterministic"),
        "keyword-only lost": ("keepdims: bool = False, *, kernel", "keepdims: bool = False, kernel", "keepdims"),
        "a parameter renamed": ("trans_a: bool = False", "transpose_a: bool = False", "matmul"),
        "a parameter dropped": ("axis: object = None, dtype: object = None, ", "axis: object = None, ", "dtype"),
        "a float default written as an int": ("alpha: float = 1.0", "alpha: float = 1", "alpha"),
        "a method missing": ("    def sumsq(", "    def _sumsq(", "sumsq"),
        "a method the module lacks": ("class Engine:", "class Engine:\n    def median(self, x: Any) -> Any: ...",
                                      "median"),
        "an attribute missing": ("dtypes: Any\n", "", "dtypes"),
        "a property as a method": ("    @property\n", "", "backend"),
        "an exception's bases": ("class ValueError(Error, ValueError)", "class ValueError(Error)", "ValueError"),
        "a function's parameter": ("def info() -> str", "def info(verbose: bool = False) -> str", "info"),
    }
    for what, (old, new, named) in breakages.items():
        assert old in good, f"(the generated stub lacks {old!r})"
        diffs = stub_differences(good.replace(old, new, 1), tandem)
        assert diffs and any(named in d for d in diffs), f"{what}: not found ({diffs})"
