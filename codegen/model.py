"""The registry's data model: small frozen values, parsed once, never mutated.

A registry entry (`OpEntry`) says which ACLNN entry points an ATen overload
launches, how its arguments map onto them, how its output is allocated and
which device the launch is guarded on (`DevicePolicy`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


@dataclass(frozen=True, order=True)
class Location:
    """Where a registry value was written: `file` relative to the repo root, 1-based `line`."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class Guard(str, Enum):
    """Which device a wrapper makes current for its launch."""

    FIRST_TENSOR = "first-tensor"  # first defined flagos tensor, torchgen's precedence
    EXPLICIT_ARG = "explicit-arg"  # the device of one named argument
    NONE = "none"  # no guard: the launch runs on the current device


class DeviceCheck(str, Enum):
    SAME_DEVICE = "same-device"  # all tensors on one device; CPU 0-dim numbers allowed
    NO_CHECK = "no-check"


@dataclass(frozen=True)
class DevicePolicy:
    guard: Guard
    guard_arg: str | None  # the argument named by explicit-arg
    device_check: DeviceCheck
    reason: str | None  # mandatory for guard none and for no-check


# ---- ACLNN prototypes (yaml/aclnn.yaml) ----------------------------------


@dataclass(frozen=True)
class AclnnParam:
    ctype: str  # as CANN writes it, spacing normalized: "const aclTensor*", "const int64_t"
    name: str
    # Written by the operator. CANN's constness does not say (aclnnRelu's `out`
    # is a `const aclTensor*`), so the registry's `outputs:` list does.
    is_output: bool = False

    @property
    def declaration(self) -> str:
        return f"{self.ctype} {self.name}"


@dataclass(frozen=True)
class AclnnPrototype:
    """aclnnXGetWorkspaceSize(params..., uint64_t* workspaceSize, aclOpExecutor** executor),
    as declared by `source`: hicann/<repo>/<path of the header or doc> in CANN's public repos."""

    name: str
    params: tuple[AclnnParam, ...]
    loc: Location
    source: str = ""

    @property
    def source_repo(self) -> str:
        """`ops-nn` of hicann/ops-nn/activation/relu/op_api/aclnn_relu.h."""
        return self.source.split("/")[1]

    @property
    def source_path(self) -> str:
        """`activation/relu/op_api/aclnn_relu.h`: the path inside the repository."""
        return "/".join(self.source.split("/")[2:])

    @property
    def header(self) -> str:
        """The generated header of this operator, as code includes it (csrc/include/flagos/aclnn/)."""
        return f"flagos/aclnn/{self.name}.h"


# ---- expressions -----------------------------------------------------------
# The registry writes argument mappings and output rules as small call
# expressions: `aclnnAdds(self, item(other), alpha, out)`,
# `broadcast(self, other)`, `dtype or sum_type(self)`.


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(frozen=True)
class Literal:
    value: bool | int | float


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple["Expr", ...]


@dataclass(frozen=True)
class Or:
    """`optional or fallback`: the optional's value when given."""

    first: "Expr"
    fallback: "Expr"


Expr = Name | Literal | Call | Or


@dataclass(frozen=True)
class Launch:
    """One launch: an entry point and the expressions of its arguments, in prototype order."""

    entry: str
    args: tuple[Expr, ...]
    text: str  # as written, for messages
    loc: Location


@dataclass(frozen=True)
class OutputRule:
    size: Expr | None
    dtype: Expr | None
    loc: Location  # the `out:` key
    size_loc: Location | None
    dtype_loc: Location | None
    name: str = "out"  # the C++ variable (allocated) or the out= argument it describes
    when: Expr | None = None  # allocated only when this bool holds (else an undefined tensor)
    when_loc: Location | None = None


@dataclass(frozen=True)
class Enum:
    """A `str` or `str?` argument that ACLNN takes as a code: each string ATen accepts and its
    code (an int, or the string CANN spells it with), as the entry's `enums:` lists them."""

    arg: str
    codes: tuple[tuple[str, int | str], ...]
    absent: int | str | None = None  # a `str?` argument's code when it is None (its `None:` key)


# ---- registry entries --------------------------------------------------------


@dataclass(frozen=True)
class OpEntry:
    """One generated ATen overload."""

    op: str  # overload name as in native_functions.yaml: "add.Tensor"
    shape: str  # kernel shape: which template writes the wrapper
    launch: Launch
    # Launched instead when the argument of its item(...) is a CPU 0-dim
    # tensor (a Python number): `x + 0.5` -> aclnnAdds.
    wrapped_number: Launch | None
    out: OutputRule | None
    policy: DevicePolicy
    loc: Location
    # Shape general: every output, in return order (`out` is then its first).
    outputs: tuple[OutputRule, ...] = ()
    # An op that is not structured in torch: the function (flagos::check::<name>,
    # csrc/aten/op_checks.cc) that makes the argument checks of ATen's kernel.
    check: str | None = None
    enums: tuple[Enum, ...] = ()  # the string arguments it passes as codes
    # Launched instead when `alternate_when` holds (isposinf of integers: aclnnInplaceZero(out),
    # where CANN's operator takes floating inputs only).
    alternate: Launch | None = None
    alternate_when: Expr | None = None

    @property
    def wrapped_arg(self) -> str | None:
        """The tensor argument that may arrive as a Python number."""
        if self.wrapped_number is None:
            return None
        for arg in self.wrapped_number.args:
            if isinstance(arg, Call) and arg.func == "item":
                return arg.args[0].name  # type: ignore[union-attr]
        return None


@dataclass(frozen=True)
class HandwrittenEntry:
    """A kernel written by hand in csrc/handwritten/, declared for the lint and the report."""

    op: str
    policy: DevicePolicy
    file: str  # relative to the repo root
    loc: Location
    # The op's body (flagos::impl::<name> in `file`): the generator writes and
    # registers the op's wrapper (device check, guard, and for a structured op
    # ATen's meta function and outputs) and calls it with the launch device.
    # None: the file registers a whole kernel (the old way).
    impl: str | None = None
    # True: structured in torch, the body takes meta()'s arguments and the
    # outputs; False: the body takes the op's own arguments and returns its result.
    structured: bool = False
    # False: registered without the per-dtype CPU fallback (copies: the
    # fallback itself copies).
    dtype_fallback: bool = True
    # True: the body composes other flagos ops (each guarding its own
    # launch); the wrapper makes the device current with a CompositeGuard,
    # which the composite-guard switch turns off for the negative control.
    composite: bool = False
    # A second body, registered under AutogradPrivateUse1 (matmul: ATen's
    # decomposition, so that autograd differentiates it), with a
    # CompositeGuard on the same launch device and no device check.
    autograd_impl: str | None = None
    # Dispatch keys under which the op falls through to the next key (_copy_from
    # under Conjugate and Negative: their fallback would copy, i.e. recurse).
    fallthrough: tuple[str, ...] = ()


@dataclass(frozen=True)
class Registry:
    ops: tuple[OpEntry, ...]  # sorted by op name
    handwritten: tuple[HandwrittenEntry, ...]  # sorted by op name
    prototypes: tuple[AclnnPrototype, ...]  # in yaml/aclnn.yaml order
    inputs: tuple[str, ...]  # the YAML files read, relative to the repo root
    composite: tuple = ()  # CompositeEntry (codegen/aten_entries.py), sorted by op name
    aten: tuple = ()  # AtenEntry (codegen/aten_entries.py), sorted by op name

    def prototype(self, name: str) -> AclnnPrototype | None:
        for proto in self.prototypes:
            if proto.name == name:
                return proto
        return None
