"""torch_fl's kernel generator: yaml/ registry -> csrc/generated/ wrappers.

Run it as `python -m codegen` (see docs/codegen.md).
"""
