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
from torchgen.api.types import DispatcherSignature
from torchgen.model import Location as TorchgenLocation
from torchgen.model import NativeFunction

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
    "Scalar?": "optional_scalar",
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
    return "other"  # Layout?, bool?, MemoryFormat?, str, ...: never marshalled


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

    def get(self, name: str) -> OpSchema | None:
        if name not in self._raw:
            return None
        if name not in self._parsed:
            self._parsed[name] = self._parse(name, self._raw[name])
        return self._parsed[name]

    def _parse(self, name: str, entry: dict) -> OpSchema:
        function, _ = NativeFunction.from_yaml(entry, TorchgenLocation(NATIVE_FUNCTIONS, 0), self._tags)
        func = function.func
        # As torchgen's own backend registrations do (RegisterDispatchKey).
        with local.parametrize(
            use_const_ref_for_mutable_tensors=function.use_const_ref_for_mutable_tensors,
            use_ilistref_for_tensor_lists=function.part_of_structured_group,
        ):
            signature = DispatcherSignature.from_schema(func).decl(name="WRAPPER")
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
        )


@functools.lru_cache(maxsize=None)
def aten_schemas(path: str = NATIVE_FUNCTIONS) -> ATenSchemas:
    return ATenSchemas(path)
