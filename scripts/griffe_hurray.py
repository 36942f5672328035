"""Griffe extension for the generated Python API reference (mkdocs.yml).

The package is read statically: its Python files and its .pyi stubs give every
name, signature and type. The classes and functions of the C extension
(hurray._hurray) have their docstrings in C, which the stubs do not repeat, so
this extension takes each missing docstring from the built module (the
extension must be importable: scripts/build_docs.sh puts it on PYTHONPATH).
One source each: signatures and types from the stubs, prose from the code.

Docstrings start with a signature line (so that inspect.signature works on the
C functions); the page already shows the signature from the stubs, so that
line is dropped. Dunder names in prose (__dlpack__) are set as code, not read
as Markdown emphasis. A special method that only inherits object's generic text
("Create and return a new object. ...") shows none. The C classes are built by
__new__, which the page would not show without a docstring: its signature is
given to the class as an __init__ (merge_init_into_class), so the class heading
shows how to construct it, and the class docstring says the rest.
"""

import importlib
import inspect
import re

import griffe

SIGNATURE = re.compile(r"^\s*[A-Za-z_][\w.]*\(.*\)\s*(->.*)?$")
DUNDER = re.compile(r"(?<![`\w])(__\w+__)(?![`\w])")
CODE = re.compile(r"(```.*?```|``.+?``|`[^`]+`)", re.S)
GENERIC = {d for d in (getattr(getattr(object, n), "__doc__", None) for n in dir(object))
           if isinstance(d, str)}

def _runtime(path):
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for name in parts[i:]:
                obj = inspect.getattr_static(obj, name) if inspect.isclass(obj) else getattr(obj, name)
        except AttributeError:
            return None
        return obj
    return None


def _doc_of(rt):
    """The docstring of a runtime class, routine, module or descriptor, else None
    (a constant's __doc__ is its type's, which says nothing about the constant)."""
    if isinstance(rt, (classmethod, staticmethod)):
        rt = rt.__func__
    if not (inspect.isclass(rt) or inspect.isroutine(rt) or inspect.ismodule(rt)
            or inspect.isdatadescriptor(rt) or inspect.ismethoddescriptor(rt)):
        return None
    doc = getattr(rt, "__doc__", None)
    return doc if isinstance(doc, str) else None


def clean(text):
    """A docstring without its leading signature line, dunders as code."""
    lines = inspect.cleandoc(text).splitlines()
    if lines and SIGNATURE.match(lines[0]):
        lines = lines[1:]
        while lines and not lines[0].strip():
            lines = lines[1:]
    # outside code spans and fences only: `t.__dlpack__()` is code already
    parts = CODE.split("\n".join(lines))
    return "".join(part if k % 2 else DUNDER.sub(r"`\1`", part) for k, part in enumerate(parts))


class HurrayDocstrings(griffe.Extension):
    def on_package(self, *, pkg, loader, **kwargs):
        if pkg.name != "hurray":
            return
        seen = set()

        def walk(obj):
            if obj.is_alias:  # the C types say they live in hurray: hurray._hurray.X is an alias
                try:
                    obj = obj.final_target
                except (griffe.AliasResolutionError, griffe.CyclicAliasError):
                    return
                if not obj.path.startswith("hurray"):
                    return
            if obj.path in seen:
                return
            seen.add(obj.path)
            text = obj.docstring.value if obj.docstring else None
            if not text:
                rt = _runtime(obj.path)
                text = _doc_of(rt) if rt is not None else None
            if text and obj.is_attribute:
                rt = _runtime(obj.path)
                tdoc = type(rt).__doc__ if rt is not None else None
                if isinstance(tdoc, str) and clean(text) == clean(tdoc):
                    text = None  # a constant: inspection gave its type's docstring
                    obj.docstring = None
            if text and obj.name.startswith("__") and text in GENERIC:
                text = None
                obj.docstring = None
            if text:
                obj.docstring = griffe.Docstring(clean(text), parent=obj)
            if obj.is_class and "__new__" in obj.members and "__init__" not in obj.members:
                new = obj.members["__new__"]
                if not new.is_alias and new.is_function:
                    params = list(new.parameters)
                    if params and params[0].name == "cls":
                        params[0] = griffe.Parameter("self", kind=params[0].kind)
                    obj.set_member("__init__", griffe.Function(
                        "__init__", parameters=griffe.Parameters(*params), returns="None",
                        lineno=new.lineno, endlineno=new.endlineno))
            for member in list(obj.members.values()):
                walk(member)

        walk(pkg)
