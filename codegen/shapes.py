"""Kernel shapes: which template writes a wrapper, and what an op needs to use it.

A shape fixes the wrapper's structure (how the output is obtained, whether
a Python-number operand may launch a scalar entry point); the registry entry
supplies the entry points, argument mappings and rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from codegen.schemas import OpSchema


@dataclass(frozen=True)
class KernelShape:
    name: str
    summary: str
    output: str  # "new": allocated on the launch device; "self": in-place; "out": the out= argument;
    # "any": shape general, one or several outputs, allocated or out= arguments
    wrapped_number: bool  # may declare a `wrapped_number` launch
    needs: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (argument, accepted kinds)
    # The template's name, when shapes share one: the shapes that allocate one
    # output and launch once differ only in what they accept (`needs`, check()).
    writer: str = ""

    @property
    def template(self) -> str:
        return f"shapes/{self.writer or self.name}.cpp.j2"

    def check(self, schema: OpSchema) -> str | None:
        """Why `schema` cannot use this shape, or None."""
        for name, kinds in self.needs:
            arg = schema.argument(name)
            if arg is None or arg.kind not in kinds:
                return f"shape {self.name} needs an argument `{name}` of type {'/'.join(kinds)}"
        tensors = [a for a in schema.arguments if a.is_tensor_like and not a.is_out]
        if self.output == "new" and (schema.returns != 1 or schema.returns_ref or schema.out_args):
            return f"shape {self.name} returns one new tensor; {schema.name} does not"
        if self.output == "self" and not schema.inplace:
            return f"shape {self.name} is for in-place ops (name_); {schema.name} is not one"
        if self.output == "out" and len(schema.out_args) != 1:
            return f"shape {self.name} is for out= ops with one `out`; {schema.name} has {len(schema.out_args)}"
        if self.output == "any" and (schema.returns < 1 or schema.inplace):
            return f"shape {self.name} returns tensors and does not write in place; {schema.name} does not fit"
        if self.name == "unary" and len(tensors) != 1:
            return f"shape unary takes one tensor; {schema.name} takes {len(tensors)}"
        if self.name == "tensor_scalar" and (
            len(tensors) != 1 or not any(a.kind == "scalar" for a in schema.arguments)
        ):
            return f"shape tensor_scalar takes one tensor and a Scalar; {schema.name} does not"
        if self.name == "matmul" and len(tensors) < 2:
            return f"shape matmul takes two or more tensors; {schema.name} takes {len(tensors)}"
        if self.name == "factory" and (tensors or not schema.has_tensor_options):
            return f"shape factory is for ops with a `device` and no tensor argument; {schema.name} is not one"
        return None


SHAPES: dict[str, KernelShape] = {
    shape.name: shape
    for shape in (
        KernelShape("unary", "out = f(self), elementwise", "new", False, (("self", ("tensor",)),), "new"),
        KernelShape("binary", "out = f(self, other), broadcast; a Python-number `other` may launch a scalar entry point",
                    "new", True, (("self", ("tensor",)), ("other", ("tensor",))), "new"),
        KernelShape("tensor_scalar", "out = f(self, scalar), elementwise", "new", False, (("self", ("tensor",)),),
                    "new"),
        KernelShape("reduction", "out = reduce(self) along dims, with keepdim", "new", False,
                    (("self", ("tensor",)), ("dim", ("int_array", "optional_int_array")), ("keepdim", ("bool",))), "new"),
        KernelShape("softmax", "out = f(self) along one dim", "new", False,
                    (("self", ("tensor",)), ("dim", ("int",))), "new"),
        KernelShape("matmul", "out = products of matrices, vectors or batches", "new", False, (), "new"),
        KernelShape("factory", "out = a new tensor on the `device` argument, filled by the launch", "new", False,
                    (("device", ("optional_device",)),)),
        KernelShape("inplace", "self = f(self, ...); returns self", "self", True, (("self", ("tensor",)),)),
        KernelShape("out", "out = f(...) into the out= argument, resized first; returns out", "out", True),
        KernelShape("general", "one or several outputs, each allocated by its own rule (or its out= argument "
                    "resized); returns a tensor or a tuple", "any", False),
    )
}
