"""Output target csrc/generated/kernels_<N>.cpp: the wrappers and their registration.

Ops are spread over SHARDS translation units by a hash of their name, so
the units compile in parallel and editing one op rewrites one shard. Each
unit pays a fixed ~2.5 s (loading the precompiled header, redoing its
pending template instantiations): 6 units, about 45 ops each, balance a
clean build (fewer units) against a one-op rebuild (smaller units).
"""

from __future__ import annotations

import dataclasses
import zlib

import jinja2

from codegen.resolve import KernelView

SHARDS = 6


def shard_of(op: str, shards: int = SHARDS) -> int:
    return zlib.crc32(op.encode("utf-8")) % shards


def shard_file(index: int) -> str:
    return f"kernels_{index}.cpp"


def render_kernel(kernel: KernelView, env: jinja2.Environment) -> str:
    """One wrapper's C++ (also what --explain shows)."""
    return env.get_template(kernel.template).render(k=kernel).rstrip("\n")


def render(kernels: list[KernelView], env: jinja2.Environment, inputs: str,
           shards: int = SHARDS) -> dict[str, str]:
    by_shard: list[list[KernelView]] = [[] for _ in range(shards)]
    for kernel in sorted(kernels, key=lambda k: k.op):
        by_shard[shard_of(kernel.op, shards)].append(kernel)
    files = {}
    template = env.get_template("kernels.cpp.j2")
    for index, members in enumerate(by_shard):
        includes = sorted({header for kernel in members for header in kernel.includes})
        aclnn_headers = sorted({f"flagos/aclnn/{entry}.h" for kernel in members for entry in kernel.entry_points})
        rendered = [dict(dataclasses.asdict(k), code="" if k.fallthrough else render_kernel(k, env)) for k in members]
        dispatch_keys = sorted({k.dispatch for k in members}, key=lambda key: (key != "PrivateUse1", key))
        files[shard_file(index)] = template.render(
            inputs=inputs, shard=index, shards=shards, includes=includes, aclnn_headers=aclnn_headers,
            kernels=rendered, dispatch_keys=dispatch_keys)
    return files
