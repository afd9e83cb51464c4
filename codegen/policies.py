"""The device policy of a registry entry: `guard`, `guard_arg`, `device_check`, `reason`."""

from __future__ import annotations

from codegen.errors import Problems
from codegen.fields import enum_member
from codegen.model import DeviceCheck, DevicePolicy, Guard, Location
from codegen.safety import MAX_TEXT, text_problem, type_word
from codegen.safety import shown as shown_text
from codegen.schemas import OpSchema
from codegen.yaml_loader import LineDict

GUARD_ARG_KINDS = ("tensor", "optional_tensor", "tensor_list", "device", "optional_device")
# The only reasons for `guard: none` on an op whose arguments name a device
# (python -m codegen --report lists them).
NONE_REASONS = {
    "launches nothing": "the kernel launches no ACLNN operator; it only reads or rewrites tensor metadata",
}


def device_policy(entry: LineDict, schema: OpSchema | None, op: str, shown: str,
                  problems: Problems) -> DevicePolicy | None:
    def loc(key: str) -> Location:
        return Location(shown, entry.line_of(key))

    guard_text = entry.get("guard")
    guards = ", ".join(g.value for g in Guard)
    if guard_text is None:
        problems.add(loc("guard" if "guard" in entry else "op"), op, "no `guard`: every op states its device policy",
                     f"add `guard: first-tensor` (or one of: {guards})")
        return None
    guard = enum_member(Guard, guard_text)
    if guard is None:
        problems.add(loc("guard"), op, f"unknown guard `{shown_text(guard_text)}`", f"use one of: {guards}")
        return None
    check_text = entry.get("device_check", DeviceCheck.SAME_DEVICE.value)
    device_check = enum_member(DeviceCheck, check_text)
    if device_check is None:
        problems.add(loc("device_check"), op, f"unknown device_check `{shown_text(check_text)}`",
                     f"use one of: {', '.join(c.value for c in DeviceCheck)}")
        return None
    reason = entry.get("reason")
    ok = True
    if "reason" in entry:
        why = text_problem(reason)
        if why is not None:
            # A reason is rendered into a `//` comment of the generated C++:
            # it must not be able to end that comment.
            problems.add(loc("reason"), op, f"`reason` {why}",
                         "write the reason as one line of printable text (at most "
                         f"{MAX_TEXT} characters, no line break, no trailing backslash)")
            reason = None
            ok = False
        else:
            reason = reason.strip()
    guard_arg = entry.get("guard_arg")
    if guard_arg is not None and not isinstance(guard_arg, str):
        problems.add(loc("guard_arg"), op, f"guard_arg must name an argument, not {type_word(guard_arg)}",
                     "write `guard_arg: <argument>` (a tensor, a tensor list or the factory's `device`)")
        return None
    if guard is Guard.EXPLICIT_ARG:
        if guard_arg is None:
            problems.add(loc("guard_arg" if "guard_arg" in entry else "guard"), op,
                         "guard explicit-arg names no argument",
                         "add `guard_arg: <argument>` (a tensor, a tensor list or the factory's `device`)")
            ok = False
        elif schema is not None:
            arg = schema.argument(guard_arg)
            names = ", ".join(a.name for a in schema.arguments if a.kind in GUARD_ARG_KINDS) or "none"
            if arg is None:
                problems.add(loc("guard_arg"), op, f"guard_arg `{shown_text(guard_arg)}` is not an argument of {op}",
                             f"name one of its tensor or device arguments: {names}")
                ok = False
            elif arg.kind not in GUARD_ARG_KINDS:
                problems.add(loc("guard_arg"), op,
                             f"guard_arg `{guard_arg}` is a {arg.type}, neither a tensor, a tensor list nor a device",
                             f"name one of: {names}")
                ok = False
    elif guard_arg is not None:
        problems.add(loc("guard_arg"), op, f"guard_arg is only read by explicit-arg, not by {guard.value}",
                     "remove `guard_arg` or use `guard: explicit-arg`")
        ok = False
    if guard is Guard.FIRST_TENSOR and schema is not None and not schema.first_tensor_candidates():
        device = " its `device` argument" if schema.argument("device") is not None else " an argument"
        problems.add(loc("guard"), op, f"guard first-tensor, but {op} has no tensor argument",
                     f"use `guard: explicit-arg` with `guard_arg:` naming{device}")
        ok = False
    if guard is Guard.NONE and reason is None and "reason" not in entry:
        problems.add(loc("guard"), op, "guard none without a `reason`",
                     "add `reason:` saying why the launch may run on whatever device is current")
        ok = False
    elif (guard is Guard.NONE and schema is not None and reason not in NONE_REASONS
          and any(a.kind in GUARD_ARG_KINDS for a in schema.arguments)):
        # An argument names a device: the launch must run there. The device
        # matrix runs every such op on a non-current device, so a `none` here
        # would also fail the op's own test.
        names = ", ".join(a.name for a in schema.arguments if a.kind in GUARD_ARG_KINDS)
        problems.add(loc("reason" if "reason" in entry else "guard"), op,
                     f"guard none, but {op}'s arguments name a device ({names}): its launches "
                     "must run there", "use `guard: first-tensor` (or explicit-arg); `none` takes a reason from: "
                     + "; ".join(f"`{key}` ({why})" for key, why in NONE_REASONS.items()))
        ok = False
    if device_check is DeviceCheck.NO_CHECK and reason is None and "reason" not in entry:
        problems.add(loc("device_check"), op, "device_check no-check without a `reason`",
                     "add `reason:` saying why its tensors may live on different devices")
        ok = False
    if not ok:
        return None
    return DevicePolicy(guard, guard_arg, device_check, reason)
