"""ATen schemas of the installed torch, through torchgen.

Wrapper signatures come from torchgen's dispatcher signature of the
installed torch's native_functions.yaml, so they always match the torch we
build against. Only the entries the registry names are parsed by torchgen;
the file itself is read once per process with libyaml when available.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import torchgen
import yaml
from torchgen import local
from torchgen.api import meta as meta_api
from torchgen.api import structured as structured_api
from torchgen.api.translate import translate
from torchgen.api.types import DispatcherSignature
from torchgen.model import Location as TorchgenLocation
from torchgen.model import FunctionSchema, NativeFunction, NativeFunctionsGroup, SchemaKind

NATIVE_DIR = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native")
NATIVE_FUNCTIONS = os.path.join(NATIVE_DIR, "native_functions.yaml")

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# torch schema type -> the kind the registry's expressions reason with.
_KINDS = {
    "Tensor": "tensor",
    "Tensor?": "optional_tensor",
    "Tensor[]": "tensor_list",
    "Scalar": "scalar",
    "int": "int",
    "SymInt": "symint",
    "float": "float",
    "bool": "bool",
    "ScalarType": "dtype",
    "ScalarType?": "optional_dtype",
    "Device": "device",
    "Device?": "optional_device",
    "int?": "optional_int",
    "SymInt?": "optional_int",
    "float?": "optional_float",
    "bool?": "optional_bool",
    "Scalar?": "optional_scalar",
    "str": "str",
    "str?": "optional_str",
}


def _kind_of(type_text: str) -> str:
    if type_text in _KINDS:
        return _KINDS[type_text]
    if type_text.startswith("int[") and type_text.endswith("]?"):
        return "optional_int_array"
    if type_text.startswith("int[") and type_text.endswith("]"):
        return "int_array"
    if type_text.startswith("SymInt[") and type_text.endswith("]"):
        return "symint_array"
    if type_text.startswith("bool[") and type_text.endswith("]"):
        return "bool_array"
    return "other"  # Layout?, MemoryFormat?, ...: never marshalled


@dataclass(frozen=True)
class Argument:
    name: str
    type: str  # as in the schema: "Tensor", "int[1]?", ...
    kind: str
    is_out: bool
    is_mutable: bool  # Tensor(a!)
    is_kwarg_only: bool

    @property
    def is_tensor_like(self) -> bool:
        return self.kind in ("tensor", "optional_tensor", "tensor_list")


@dataclass(frozen=True)
class StructuredGroup:
    """An overload that is structured in the installed torch: ATen's meta function
    (`at::meta::structured_<name>`) checks its arguments and computes its outputs."""

    meta_class: str  # at::meta::structured_add_Tensor
    meta_header: str  # ATen/ops/add_meta.h
    meta_args: tuple[str, ...]  # the C++ arguments of meta(...), from the wrapper's own
    kind: str  # "functional", "inplace" or "out"
    outputs: tuple[str, ...]  # the outputs' C++ names: `out` or the return names, `self`, the out= arguments
    meta_params: tuple[str, ...] = ()  # meta()'s parameter declarations ("const at::Tensor & self")
    group_outputs: tuple[str, ...] = ()  # the out= overload's out arguments: a body's output parameters


@dataclass(frozen=True)
class OpSchema:
    name: str
    schema: str  # the schema line of native_functions.yaml
    arguments: tuple[Argument, ...]  # in schema order; out arguments last
    self_arg: str | None
    positional: tuple[str, ...]  # non-out positional argument names, in order
    out_args: tuple[str, ...]
    signature: str  # C++ declaration with the placeholder name WRAPPER
    returns_ref: bool  # returns Tensor& (in-place and out= forms)
    returns: int
    uses_ilistref: bool
    has_tensor_options: bool
    inplace: bool
    structured: StructuredGroup | None = None
    # As `signature` with SymInts as plain integers (int64_t, at::IntArrayRef): what a
    # handwritten op's wrapper and body take (TORCH_FN accepts it for a SymInt schema).
    concrete_signature: str = ""

    def argument(self, name: str) -> Argument | None:
        for arg in self.arguments:
            if arg.name == name:
                return arg
        return None

    def declaration(self, wrapper: str) -> str:
        return self.signature.replace("WRAPPER", wrapper, 1)

    def first_tensor_candidates(self) -> tuple[str, ...]:
        """torchgen's device precedence: `self`, then out arguments, then positional ones."""
        ordered: list[str] = []
        for name in ((self.self_arg,) if self.self_arg else ()) + self.out_args + self.positional:
            arg = self.argument(name)
            if arg is not None and arg.is_tensor_like and name not in ordered:
                ordered.append(name)
        return tuple(ordered)


class ATenSchemas:
    """The installed torch's operators, by overload name ("add.Tensor", "relu")."""

    def __init__(self, path: str = NATIVE_FUNCTIONS):
        with open(path, encoding="utf-8") as handle:
            entries = yaml.load(handle, Loader=_Loader)
        with open(os.path.join(os.path.dirname(path), "tags.yaml"), encoding="utf-8") as handle:
            self._tags = {entry["tag"] for entry in yaml.load(handle, Loader=_Loader)}
        self._raw: dict[str, dict] = {}
        for entry in entries:
            func = entry["func"]
            self._raw[func[: func.index("(")]] = entry
        self._parsed: dict[str, OpSchema] = {}
        self._delegates: dict[str, list[str]] | None = None  # structured out= op -> its other overloads

    def names(self) -> list[str]:
        return sorted(self._raw)

    def suggest(self, name: str, preferred: tuple[str, ...] = ()) -> list[str]:
        """Overloads (and base names) of torch within a few edits of `name`; `preferred` first on a tie."""
        from codegen.suggest import closest

        bases = {key.partition(".")[0] for key in self._raw}
        return closest(name, list(self._raw) + list(bases - set(self._raw)), preferred, n=3)

    def raw(self, name: str) -> dict | None:
        """native_functions.yaml's entry of an overload (dispatch keys, tags, ...)."""
        return self._raw.get(name)

    def overloads(self, base: str) -> list[str]:
        """Every overload of `base` (`add` -> add.Tensor, add.Scalar, add.out, ...)."""
        return sorted(key for key in self._raw if key == base or key.startswith(base + "."))

    def forms(self, name: str) -> dict[str, str]:
        """The overloads that are forms of `name`, by kind (`functional`, `inplace`, `out`):
        those with its signature once out= arguments, the trailing `_` and the overload
        name are dropped, as torchgen groups them (fmod.Tensor -> fmod_.Tensor, fmod.Tensor_out)."""
        if name not in self._raw:
            return {}
        schema = FunctionSchema.parse(self._raw[name]["func"])
        base = schema.name.name.base
        found: dict[str, str] = {}
        for key in self.overloads(base) + self.overloads(base + "_"):
            other = FunctionSchema.parse(self._raw[key]["func"])
            if other.signature() == schema.signature():
                found.setdefault(other.kind().name, key)
        return found

    def get(self, name: str) -> OpSchema | None:
        if name not in self._raw:
            return None
        if name not in self._parsed:
            self._parsed[name] = self._parse(name, self._raw[name])
        return self._parsed[name]

    def _function(self, name: str) -> NativeFunction:
        function, _ = NativeFunction.from_yaml(self._raw[name], TorchgenLocation(NATIVE_FUNCTIONS, 0), self._tags)
        return function

    def _group(self, function: NativeFunction) -> NativeFunctionsGroup | None:
        """The structured group of `function` (its out= overload declares `structured: True`;
        the functional and in-place ones delegate to it), or None."""
        if function.structured:
            out_name = str(function.func.name)
        elif function.structured_delegate is not None:
            out_name = str(function.structured_delegate)
        else:
            return None
        if self._delegates is None:
            self._delegates = {}
            for key, raw in self._raw.items():
                if raw.get("structured_delegate"):
                    self._delegates.setdefault(raw["structured_delegate"], []).append(key)
        members = [self._function(out_name)] + [self._function(n) for n in self._delegates.get(out_name, [])]
        by_kind = {f.func.kind(): f for f in members if f.func.kind() in
                   (SchemaKind.functional, SchemaKind.inplace, SchemaKind.out)}
        return NativeFunctionsGroup.from_dict(by_kind)

    def _structured(self, function: NativeFunction, signature: DispatcherSignature) -> StructuredGroup | None:
        group = self._group(function)
        if group is None:
            return None
        func = function.func
        kind = func.kind()
        if kind is SchemaKind.out:
            outputs = tuple(a.name for a in func.arguments.out)
        elif kind is SchemaKind.inplace:
            outputs = ("self",)
        elif len(func.returns) == 1:
            outputs = ("out",)
        else:
            outputs = tuple(r.name or f"out{i}" for i, r in enumerate(func.returns))
        name = meta_api.name(group)
        # torchgen's translate: the wrapper's arguments -> what meta() takes
        # (SymInt lists become int lists, as in torchgen's own wrappers).
        goals = structured_api.meta_arguments(group)
        meta_args = tuple(e.expr for e in translate(signature.arguments(), goals, method=False))
        return StructuredGroup(
            meta_class=f"at::meta::structured_{name}",
            meta_header=f"ATen/ops/{group.functional.root_name}_meta.h",
            meta_args=meta_args,
            kind=kind.name,
            outputs=outputs,
            meta_params=tuple(b.decl() for b in goals),
            group_outputs=tuple(a.name for a in group.out.func.arguments.out),
        )

    def _parse(self, name: str, entry: dict) -> OpSchema:
        function = self._function(name)
        func = function.func
        # As torchgen's own backend registrations do (RegisterDispatchKey).
        with local.parametrize(
            use_const_ref_for_mutable_tensors=function.use_const_ref_for_mutable_tensors,
            use_ilistref_for_tensor_lists=function.part_of_structured_group,
        ):
            dispatcher_signature = DispatcherSignature.from_schema(func)
            signature = dispatcher_signature.decl(name="WRAPPER")
            concrete_signature = DispatcherSignature.from_schema(func, symint=False).decl(name="WRAPPER")
            structured = self._structured(function, dispatcher_signature)
        args = func.arguments
        out_names = tuple(a.name for a in args.out)
        kwarg_names = {a.name for a in args.flat_kwarg_only}
        arguments = tuple(
            Argument(
                name=a.name,
                type=str(a.type),
                kind=_kind_of(str(a.type)),
                is_out=a.name in out_names,
                is_mutable=a.annotation is not None and a.annotation.is_write,
                is_kwarg_only=a.name in kwarg_names,
            )
            for a in args.flat_all
        )
        return OpSchema(
            name=name,
            schema=entry["func"],
            arguments=arguments,
            self_arg=args.self_arg.argument.name if args.self_arg is not None else None,
            positional=tuple(a.name for a in args.flat_positional),
            out_args=out_names,
            signature=signature,
            returns_ref=signature.lstrip().startswith("at::Tensor &"),
            returns=len(func.returns),
            uses_ilistref=function.part_of_structured_group,
            has_tensor_options=args.tensor_options is not None,
            inplace=func.name.name.inplace,
            structured=structured,
            concrete_signature=concrete_signature,
        )


@functools.lru_cache(maxsize=None)
def aten_schemas(path: str = NATIVE_FUNCTIONS) -> ATenSchemas:
    return ATenSchemas(path)
