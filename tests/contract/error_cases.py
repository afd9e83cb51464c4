"""Argument errors at the call: the sweeps behind test_errors_at_call.py.

Three sweeps compare the flagos device with the CPU, case by case:

A ("error_inputs"): PyTorch's OpInfo error inputs, generated for "cpu" and
  for "flagos:1" while flagos:0 is current.
B ("overlap"): in-place and out= variants of the OpInfos, with an output that
  partially overlaps an input and with an expanded (stride-0) output; and issue
  23's own examples, which no OpInfo sample builds.
C ("empty_reductions"): reductions over empty inputs, with and without dim.

Every case gets one class:

  at-call      flagos raised at the call, with the expected type and message
  wrong-error  flagos raised at the call, with another type or message
  at-sync      the call returned; synchronizing the devices right after failed
               (also: the call raised the stream's failure, through a
               synchronization inside the call: "ACL error ...")
  silent       nothing raised at all (the CPU raised)
  fallback     the call raised on the backend's CPU fallback (no flagos kernel)
  crash        the child process died (a signal) or hung while running the case
  skipped      not comparable (reason given)
and, where the CPU does not raise:
  cpu-allows   B: the CPU accepts the output (values compared, not asserted)
  same-value   C: flagos returns the CPU's value (dtype, shape, values)
  wrong-value  C: flagos returns another value
  spurious-error C: flagos raises (at the call or at sync) where the CPU
               returns a value

The sweeps run in a child process (`python -P error_cases.py --child ...`) that
writes one JSON line per case, flushed, and a "begin" line before running
flagos code: when the child dies, the parent records a crash for the case it
was running and starts a new child after it. Each case is settled before the
next: every device synchronized (a failure it reports is recorded, and a second
synchronization must find the streams clean), the hazard report and counters
reset, flagos:0 current again.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SWEEPS = {"A": "error_inputs", "B": "overlap", "C": "empty_reductions"}

# Classes that mean "the contract holds" and those that the tests count as failures.
FAILING = ("at-sync", "silent", "crash", "wrong-value", "spurious-error")
# A case's number: its op's position in the sweep's op list times OP_STRIDE plus its index within
# the op; a new child starts at a number (after the case a crash stopped).
OP_STRIDE = 100000
# The harness's self-test: a child that begins the case named here kills itself with SIGSEGV.
CRASH_HOOK = "FLAGOS_ERRORS_AT_CALL_CRASH_AT"
DEVICE = "flagos:1"   # every case runs here ...
CURRENT = 0           # ... while flagos:0 is current

# Reductions of sweep C that are not ReductionOpInfos (or are, but are also
# called here through their torch function): name -> torch attribute.
EXTRA_REDUCTIONS = ("max", "min", "amax", "amin", "argmax", "argmin", "logsumexp", "aminmax",
                    "std", "var", "mean", "prod", "sum", "norm")

# Empty inputs of sweep C: shape -> dims tried (None: no dim argument).
EMPTY_INPUTS = (((0, 3), (None, 0, 1)), ((3, 0), (None, 1, 0)), ((0,), (None, 0)))

# Sweep B takes every sample of an op by default (about 7400 cases, 15 s); `samples=N` takes the
# first N applicable ones per op, variant and construction (a quicker look).
ALL_SAMPLES = None


# ----------------------------------------------------------------------------------------------
# Messages


def first_line(message: str) -> str:
    for line in str(message).splitlines():
        if line.strip():
            return line.strip()
    return ""


_DEVICE_NAMES = re.compile(r"\b(?:flagos|cpu|cuda|privateuseone)(?::\d+)?\b", re.IGNORECASE)


def normalize(text: str) -> str:
    """Device names, addresses and numbers abstracted, whitespace collapsed."""
    text = _DEVICE_NAMES.sub("<device>", str(text))
    text = re.sub(r"0x[0-9a-fA-F]+", "<addr>", text)
    text = re.sub(r"\d+", "<n>", text)
    return " ".join(text.split())


def message_matches_cpu(cpu_message: str, message: str) -> bool:
    """The CPU's first line, normalized, appears in the flagos message, normalized."""
    return normalize(first_line(cpu_message)) in normalize(message)


def is_stream_failure(message: str) -> bool:
    """A message of the simulator's stream failure: the ATen kernel failed on a worker thread and
    a synchronization (here: one inside the call) reported it."""
    return "ACL error" in message and ("task failed" in message or "507015" in message)


def short(message: str, limit: int = 160) -> str:
    line = first_line(message)
    return line if len(line) <= limit else line[: limit - 3] + "..."


def stream_failure_core(message: str) -> str:
    """The part of a stream failure that names the kernel and ATen's message, without the runtime's
    prefix (device, API, stream address)."""
    found = re.search(r"\((ACL_ERROR_[A-Z_]+)\):\s*(.*)", first_line(message))
    return f"{found.group(1)}: {found.group(2)}" if found else first_line(message)


# ----------------------------------------------------------------------------------------------
# Child side: runs one sweep and writes JSON lines.


class _Writer:
    def __init__(self, path: str, start: int, only: str | None = None):
        self.file = open(path, "a", buffering=1)
        self.start = start
        self.only = only
        self.ordinal = -1

    def wants(self, case_id: str) -> bool:
        """False for every case but `only`, when the parent reruns one case alone."""
        return self.only is None or case_id == self.only or (
            case_id.endswith(":<generation>") and self.only.startswith(case_id[: -len("<generation>")]))

    def skips_op(self, position: int) -> bool:
        """True if every case of the op at `position` comes before `start`: a child that goes on
        after a crash neither generates nor enumerates the ops before it."""
        return position < self.start // OP_STRIDE

    def number(self, position: int, local: int) -> int | None:
        """The case's number (op position, case within the op), or None if an earlier child already
        finished it."""
        number = position * OP_STRIDE + local
        self.ordinal = max(self.ordinal, number)
        return number if number >= self.start else None

    def begin(self, ordinal: int, case_id: str, op: str) -> None:
        """Written before the case runs any flagos code: the parent's crash attribution."""
        self.write({"begin": ordinal, "id": case_id, "op": op})
        if os.environ.get(CRASH_HOOK) == case_id:  # the harness's own test: die as a crash would
            os.kill(os.getpid(), signal.SIGSEGV)

    def write(self, record: dict) -> None:
        self.file.write(json.dumps(record, default=str) + "\n")
        self.file.flush()


class _Runner:
    """Runs calls on flagos with the bookkeeping every case needs: the fallback counter, a
    synchronization of every device after the call, hazards, and a clean stream afterwards."""

    def __init__(self, writer: _Writer):
        import torch
        import torch_fl

        self.torch = torch
        self.sim = torch_fl.sim
        self.writer = writer
        self.devices = torch.flagos.device_count()

    def sync_all(self) -> list:
        errors = []
        for device in range(self.devices):
            try:
                self.torch.flagos.synchronize(device)
            except Exception as error:  # noqa: BLE001 - any failure is a finding
                errors.append(f"flagos:{device}: {error}")
        return errors

    def settle(self) -> dict:
        """Reports (and so clears) failed work left by generation or an earlier case."""
        info = {}
        stray = self.sync_all()
        if stray:
            info["stray_sync_errors"] = [short(e) for e in stray]
        if self.sim.hazard_report():
            info["stray_hazards"] = self.sim.hazard_report()[:3]
        self.sim.reset_stats()
        if self.torch.flagos.current_device() != CURRENT:
            info["current_device_was"] = self.torch.flagos.current_device()
            self.torch.flagos.set_device(CURRENT)
        return info

    def run(self, call) -> dict:
        """Calls `call()` on flagos. Returns {"error": exc or None, "value": result, "sync": [...],
        "fallback": {...}, "hazards": [...], "leftover": [...]}."""
        outcome = {"error": None, "value": None}
        try:
            outcome["value"] = call()
        except Exception as error:  # noqa: BLE001
            outcome["error"] = error
        outcome["sync"] = self.sync_all()
        outcome["fallback"] = dict(self.sim.stats()["fallback_ops"])
        outcome["hazards"] = self.sim.hazard_report()[:3]
        # A failure is reported once: a second synchronization must find the streams clean.
        outcome["leftover"] = self.sync_all() if outcome["sync"] else []
        if self.torch.flagos.current_device() != CURRENT:
            outcome["current_device_after"] = self.torch.flagos.current_device()
            self.torch.flagos.set_device(CURRENT)
        self.sim.reset_stats()
        return outcome


def _error_text(error: BaseException) -> str:
    message = str(error)
    if is_stream_failure(message):
        message = stream_failure_core(message)
    return f"{type(error).__name__}: {short(message, 240)}"


def classify(outcome: dict, accepts) -> tuple:
    """Class of a case where the CPU raised. `accepts(error)` tells whether an error at the call is
    the expected one. Returns (class, detail dict)."""
    error, sync, fallback = outcome["error"], outcome["sync"], outcome["fallback"]
    detail = {}
    if fallback:
        detail["fallback_ops"] = fallback
    if sync:
        detail["sync_error"] = short(stream_failure_core(sync[0]), 240)
    if outcome.get("leftover"):
        detail["sync_error_not_cleared"] = short(outcome["leftover"][0])
    if outcome.get("hazards"):
        detail["hazards"] = outcome["hazards"]
    if "current_device_after" in outcome:
        detail["current_device_after"] = outcome["current_device_after"]
    if error is not None:
        detail["flagos_error"] = _error_text(error)
        if is_stream_failure(str(error)):
            # A flagos kernel failed on the stream, and a synchronization inside the call (the
            # fallback's copy to the CPU, an .item()) reported it: the wrapper did not check.
            detail["note"] = "the stream's failure, reported by a synchronization inside the call"
            return "at-sync", detail
        if fallback:
            detail["fallback_error_expected"] = bool(accepts(error))
            return "fallback", detail
        return ("at-call" if accepts(error) else "wrong-error"), detail
    if sync:
        return "at-sync", detail
    return "silent", detail


def _case_record(sweep, op, case_id, cls, **detail) -> dict:
    return {"sweep": sweep, "op": op, "id": case_id, "cls": cls, **detail}


# ---- sweep A -----------------------------------------------------------------------------------


def _seed_for(name: str) -> int:
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def _op_db(writer, subset_ops=None, offset=0):
    """(position, OpInfo) over op_db, the positions stable whatever the filter."""
    from torch.testing._internal.common_methods_invocations import op_db

    for position, op in enumerate(op_db, start=offset):
        if (subset_ops is None or op.full_name in subset_ops) and not writer.skips_op(position):
            yield position, op


def _generate(op, device, runner):
    """(list of ErrorInputs, error or None): the generator's items up to its first failure."""
    items, failure = [], None
    runner.torch.manual_seed(_seed_for(op.full_name))
    try:
        for item in op.error_inputs(device):
            items.append(item)
    except Exception as error:  # noqa: BLE001
        failure = _error_text(error)
    return items, failure


def _signature(value):
    """A hashable description of an argument: shapes and dtypes of tensors, other values by repr
    with device names abstracted."""
    import torch

    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype))
    if isinstance(value, (list, tuple)):
        return tuple(_signature(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _signature(v)) for k, v in sorted(value.items()))
    return normalize(repr(value))[:200]


def _error_key(ei):
    si = ei.sample_input
    return (str(ei.error_type), str(getattr(ei.error_regex, "pattern", ei.error_regex)),
            _signature(si.input), _signature(si.args), _signature(si.kwargs))


def _align(cpu_items, flagos_items):
    """Pairs (cpu index or None, flagos index or None): the generators may yield device-dependent
    items (bounds checks only on the CPU, cross-device errors only elsewhere), so the two lists
    are aligned on each item's error and argument signature, not by position."""
    import difflib

    cpu_keys = [_error_key(ei) for ei in cpu_items]
    flagos_keys = [_error_key(ei) for ei in flagos_items]
    pairs = []
    matcher = difflib.SequenceMatcher(None, cpu_keys, flagos_keys, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs += list(zip(range(i1, i2), range(j1, j2)))
        else:
            pairs += [(i, None) for i in range(i1, i2)] + [(None, j) for j in range(j1, j2)]
    return pairs


def _regex_ok(error: BaseException, error_type, regex) -> bool:
    if not isinstance(error, error_type):
        return False
    pattern = regex if hasattr(regex, "search") else re.compile(regex)
    return pattern.search(str(error)) is not None


def sweep_error_inputs(writer: _Writer, runner: _Runner, subset_ops=None, skip_ops=()) -> None:
    for position, op in _op_db(writer, subset_ops):
        if op.error_inputs_func is None:
            continue
        name = op.full_name
        # Generating the flagos inputs runs flagos code: a pseudo-case of its own, so that a crash
        # there is recorded against the op (whose cases the next child then leaves out).
        writer.number(position, 0)
        if name in skip_ops or not writer.wants(f"A:{name}:<generation>"):
            continue
        # (even when a new child goes on inside this op: the generation runs again)
        writer.begin(position * OP_STRIDE, f"A:{name}:<generation>", name)
        cpu_items, cpu_failure = _generate(op, "cpu", runner)
        flagos_items, flagos_failure = _generate(op, DEVICE, runner)
        generation_info = runner.settle()
        if generation_info.get("stray_sync_errors"):
            flagos_failure = flagos_failure or ("generation left failed work: "
                                                + generation_info["stray_sync_errors"][0])
        writer.write({"generated": position * OP_STRIDE, "id": f"A:{name}:<generation>"})
        for local, (index, flagos_index) in enumerate(_align(cpu_items, flagos_items), start=1):
            ordinal = writer.number(position, local)
            case_id = f"A:{name}:{index}" if index is not None else f"A:{name}:flagos-only-{flagos_index}"
            if ordinal is None or not writer.wants(case_id):
                continue
            writer.begin(ordinal, case_id, name)
            if index is None:
                writer.write(_case_record("A", name, case_id, "skipped", n=ordinal, reason=(
                    "no CPU counterpart (the generator yields it for non-CPU devices only)")))
                continue
            ei = cpu_items[index]
            regex = getattr(ei.error_regex, "pattern", ei.error_regex)
            expected = f"{getattr(ei.error_type, '__name__', ei.error_type)}: {regex}"
            si = ei.sample_input
            try:
                op(si.input, *si.args, **si.kwargs)
                cpu_error = None
            except Exception as error:  # noqa: BLE001
                cpu_error = error
            if cpu_error is None:
                writer.write(_case_record("A", name, case_id, "skipped", n=ordinal, expected=expected,
                                          reason="does not raise on the CPU"))
                continue
            if not _regex_ok(cpu_error, ei.error_type, ei.error_regex):
                writer.write(_case_record("A", name, case_id, "skipped", n=ordinal, expected=expected,
                                          reason=f"raises another error on the CPU: {_error_text(cpu_error)}"))
                continue
            if flagos_index is None:
                reason = (f"generating it on {DEVICE} failed: {flagos_failure}" if flagos_failure else
                          f"no {DEVICE} counterpart (the generator yields it for the CPU only)")
                writer.write(_case_record("A", name, case_id, "skipped", n=ordinal, expected=expected, reason=reason))
                continue
            fei = flagos_items[flagos_index]
            fsi = fei.sample_input
            stray = runner.settle()
            outcome = runner.run(lambda: op(fsi.input, *fsi.args, **fsi.kwargs))
            cls, detail = classify(outcome, lambda e: _regex_ok(e, fei.error_type, fei.error_regex))
            writer.write(_case_record("A", name, case_id, cls, n=ordinal, expected=expected, **stray, **detail))
        del cpu_items, flagos_items
        runner.settle()


# ---- shared by B and C -------------------------------------------------------------------------


def _to_device(value, device):
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    return value


def _tensors(value) -> list:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _compare(cpu_value, flagos_value) -> str | None:
    """None if equal (values with NaNs equal, dtype, shape), else the first difference."""
    import torch

    cpu_tensors, flagos_tensors = _tensors(cpu_value), _tensors(flagos_value)
    if len(cpu_tensors) != len(flagos_tensors) or (not cpu_tensors and cpu_value != flagos_value):
        return f"structure differs: {type(cpu_value).__name__} vs {type(flagos_value).__name__}"
    for expected, actual in zip(cpu_tensors, flagos_tensors):
        try:
            torch.testing.assert_close(actual.cpu(), expected, equal_nan=True, rtol=1e-4, atol=1e-5)
        except Exception as error:  # noqa: BLE001
            return short(str(error).replace("\n", " "), 300)
    return None


def _cpu_error_matcher(cpu_error):
    def accepts(error):
        return type(error) is type(cpu_error) and message_matches_cpu(str(cpu_error), str(error))
    return accepts


def _pick_dtype(op):
    import torch

    supported = op.supported_dtypes("cpu")
    if torch.float32 in supported:
        return torch.float32
    ordered = sorted(supported, key=str)
    return ordered[0] if ordered else None


def _run_raising_case(writer, runner, sweep, name, case_id, ordinal, cpu_call, flagos_call, extra):
    """The CPU then flagos (the case's begin line is written); the class per the CPU's outcome."""
    try:
        cpu_value, cpu_error = cpu_call(), None
    except Exception as error:  # noqa: BLE001
        cpu_value, cpu_error = None, error
    stray = runner.settle()
    outcome = runner.run(flagos_call)
    if cpu_error is not None:
        cls, detail = classify(outcome, _cpu_error_matcher(cpu_error))
        record = _case_record(sweep, name, case_id, cls, n=ordinal, cpu_error=_error_text(cpu_error),
                              **extra, **stray, **detail)
    else:
        record = _cpu_allows_record(sweep, name, case_id, ordinal, cpu_value, outcome, extra, stray)
    writer.write(record)
    return record


def _cpu_allows_record(sweep, name, case_id, ordinal, cpu_value, outcome, extra, stray):
    detail = {}
    if outcome["fallback"]:
        detail["fallback_ops"] = outcome["fallback"]
    if outcome["sync"]:
        detail["sync_error"] = short(stream_failure_core(outcome["sync"][0]), 240)
    if outcome.get("hazards"):
        detail["hazards"] = outcome["hazards"]
    if outcome["error"] is not None:
        detail["flagos_error"] = _error_text(outcome["error"])
    value_diff = None
    if outcome["error"] is None and not outcome["sync"]:
        value_diff = _compare(cpu_value, outcome["value"])
    if sweep == "B":
        # The CPU accepts this output: record what flagos did, assert nothing.
        if outcome["error"] is not None or outcome["sync"]:
            detail["note"] = "flagos raises where the CPU accepts"
        elif value_diff:
            detail["note"] = f"values differ: {value_diff}"
        return _case_record(sweep, name, case_id, "cpu-allows", n=ordinal, **extra, **stray, **detail)
    if outcome["error"] is not None or outcome["sync"]:
        cls = "fallback" if outcome["fallback"] and outcome["error"] is not None else "spurious-error"
    elif value_diff:
        cls, detail["value_diff"] = "wrong-value", value_diff
    else:
        cls = "same-value"
    return _case_record(sweep, name, case_id, cls, n=ordinal, **extra, **stray, **detail)


# ---- sweep B -----------------------------------------------------------------------------------
#
# Each case is built on the CPU from one OpInfo sample, then reproduced identically on flagos:
# the same buffer contents (copied with .to()), the same views into it.
#   inplace:overlap  self is a view one element into a buffer whose start backs another tensor
#                    argument of self's dtype (the first one)
#   inplace:stride0  self is a one-element tensor expanded to self's shape
#   out:overlap      out is a view one element into a buffer whose start backs the first tensor
#                    argument of out's dtype
#   out:stride0      out is a one-element tensor expanded to the result's shape
# A sample is used only if the plain variant (a clone as self, a fresh out=) works on the CPU.


def _shift(n_written: int, n_read: int):
    """Offsets (written, read) in a shared buffer so that the two ranges partially overlap: the
    written tensor one element in; if the read one has a single element, it sits one element into
    the written one instead. None if both have a single element (full overlap only)."""
    if n_written < 1 or n_read < 1 or (n_written == 1 and n_read == 1):
        return None
    return (1, 0) if n_read >= 2 else (0, 1)


def _overlapping(written, read, device):
    """Views (written_view, read_view) of one buffer on `device`, shifted by one element; the read
    tensor's values win where they overlap. Same dtype required."""
    import torch

    off_w, off_r = _shift(written.numel(), read.numel())
    buffer = torch.zeros(max(off_w + written.numel(), off_r + read.numel()), dtype=read.dtype)
    buffer[off_w:off_w + written.numel()] = written.reshape(-1)
    buffer[off_r:off_r + read.numel()] = read.reshape(-1)
    buffer = buffer.to(device)
    return (buffer[off_w:off_w + written.numel()].view(written.shape),
            buffer[off_r:off_r + read.numel()].view(read.shape))


def _expanded(value, shape, device):
    """A one-element tensor holding `value` (0-d) expanded to `shape`: every element at one address.

    On the CPU its storage has room for the whole shape behind that element: some of ATen's CPU
    kernels write every element of a stride-0 out= from its data pointer (torch 2.13's avg_pool3d
    and narrow_copy: `torch._C._nn.avg_pool3d(torch.randn(1, 2, 8, 8, 8), 2,
    out=torch.zeros(1, 1, 1, 1, 1).expand(1, 2, 4, 4, 4))` corrupts the heap), which would kill the
    child in the reference call. The flagos tensor keeps a one-element allocation: a flagos kernel
    that writes past it is a crash of its case."""
    import torch

    numel = 1
    for size in shape:
        numel *= size
    room = max(numel, 1) if device == "cpu" else 1
    storage = torch.zeros(room, dtype=value.dtype)
    storage[0] = value
    return storage.to(device)[:1].reshape((1,) * len(shape)).expand(shape)


def _on_device(args, kwargs, device):
    """The sample's arguments on `device` (copies; a factory's device= follows)."""
    import torch

    moved_args = list(_to_device(list(args), device))
    moved_kwargs = _to_device(dict(kwargs), device)
    if "device" in moved_kwargs and moved_kwargs["device"] is not None:
        moved_kwargs["device"] = torch.device(device)
    if device == "cpu":  # .to() returned the sample's own tensors: copy them, the call may write
        moved_args = [a.clone() if isinstance(a, torch.Tensor) else a for a in moved_args]
        moved_kwargs = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in moved_kwargs.items()}
    return moved_args, moved_kwargs


def _tensor_slots(args, kwargs, dtype, skip_first: bool):
    """[(position or keyword, tensor)] of the top-level tensor arguments of `dtype`."""
    import torch

    slots = [(i, a) for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.dtype == dtype
             and not (skip_first and i == 0)]
    slots += [(k, v) for k, v in kwargs.items() if isinstance(v, torch.Tensor) and v.dtype == dtype]
    return slots


def _place(args, kwargs, where, value):
    if isinstance(where, int):
        args[where] = value
    else:
        kwargs[where] = value


def _b_cases(op, dtype, samples_per_kind):
    """Yields (kind, sample_index, make) with make(device) -> a call, for each applicable sample
    (at most samples_per_kind per kind; None: all)."""
    import torch

    taken = collections.Counter()
    kinds = []
    if op.inplace_variant is not None:
        kinds += ["inplace:overlap", "inplace:stride0"]
    if op.supports_out:
        kinds += ["out:overlap", "out:stride0"]
    if not kinds:
        return
    torch.manual_seed(_seed_for(op.full_name))
    try:
        samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
    except Exception:  # noqa: BLE001 - a sample function that fails has no cases
        return
    for index, sample in enumerate(samples):
        if samples_per_kind is not None and all(taken[k] >= samples_per_kind for k in kinds):
            return
        args, kwargs = [sample.input, *sample.args], dict(sample.kwargs)
        for kind in kinds:
            if samples_per_kind is not None and taken[kind] >= samples_per_kind:
                continue
            make = _b_make(op, kind, args, kwargs)
            if make is not None:
                taken[kind] += 1
                yield kind, index, make


def _b_make(op, kind, args, kwargs):
    import torch

    variant, construction = kind.split(":")
    if variant == "inplace":
        self_ = args[0]
        if not isinstance(self_, torch.Tensor):
            return None
        try:  # the plain in-place call must work on the CPU
            moved, moved_kwargs = _on_device(args, kwargs, "cpu")
            op.inplace_variant(*moved, **moved_kwargs)
        except Exception:  # noqa: BLE001
            return None
        if construction == "stride0":
            if self_.numel() < 2:
                return None
            first = self_.reshape(-1)[0].clone()

            def make(device):
                moved, moved_kwargs = _on_device(args, kwargs, device)
                moved[0] = _expanded(first, self_.shape, device)
                return lambda: op.inplace_variant(*moved, **moved_kwargs)
            return make
        slots = _tensor_slots(args, kwargs, self_.dtype, skip_first=True)
        if not slots or _shift(self_.numel(), slots[0][1].numel()) is None:
            return None
        where, source = slots[0]

        def make(device):
            moved, moved_kwargs = _on_device(args, kwargs, device)
            moved[0], source_view = _overlapping(self_, source, device)
            _place(moved, moved_kwargs, where, source_view)
            return lambda: op.inplace_variant(*moved, **moved_kwargs)
        return make

    # out=: the result's structure from the plain call on the CPU
    try:
        moved, moved_kwargs = _on_device(args, kwargs, "cpu")
        result = op(*moved, **moved_kwargs)
    except Exception:  # noqa: BLE001
        return None
    if isinstance(result, torch.Tensor):
        results, as_tuple = [result], False
    elif isinstance(result, (tuple, list)) and result and all(isinstance(r, torch.Tensor) for r in result):
        results, as_tuple = list(result), True
    else:
        return None
    specs = [(r.shape, r.dtype) for r in results]

    def with_out(device, first):
        outs = [torch.empty(shape, dtype=dt, device=device) for shape, dt in specs]
        if first is not None:
            outs[0] = first
        return tuple(outs) if as_tuple else outs[0]

    try:  # the plain out= call must work on the CPU
        moved, moved_kwargs = _on_device(args, kwargs, "cpu")
        op(*moved, **moved_kwargs, out=with_out("cpu", None))
    except Exception:  # noqa: BLE001
        return None
    out_shape, out_dtype = specs[0]
    if construction == "stride0":
        if results[0].numel() < 2:
            return None

        def make(device):
            moved, moved_kwargs = _on_device(args, kwargs, device)
            out = with_out(device, _expanded(torch.zeros((), dtype=out_dtype), out_shape, device))
            return lambda: op(*moved, **moved_kwargs, out=out)
        return make
    slots = _tensor_slots(args, kwargs, out_dtype, skip_first=False)
    if not slots or _shift(results[0].numel(), slots[0][1].numel()) is None:
        return None
    where, source = slots[0]
    out_like = torch.zeros(out_shape, dtype=out_dtype)

    def make(device):
        moved, moved_kwargs = _on_device(args, kwargs, device)
        out_view, source_view = _overlapping(out_like, source, device)
        _place(moved, moved_kwargs, where, source_view)
        out = with_out(device, out_view)
        return lambda: op(*moved, **moved_kwargs, out=out)
    return make


def _issue_examples():
    """Issue 23's own examples, which no OpInfo sample builds (copy_ and indexing writes, relu_, a
    cat whose out= overlaps one of its list's tensors): (name, kind, make) as in _b_cases."""
    import torch

    def ar(n, device, shape=None):
        return torch.arange(float(n)).reshape(shape or (n,)).to(device)

    def zero_expanded(device, shape=(4,)):
        return _expanded(torch.zeros(()), shape, device)

    def bind(function, *tensors):
        return lambda: function(*tensors)

    overlap = [  # x = 0, 1, ..., 5; the written-to tensor starts one element after the one read
        ("Tensor.__setitem__", lambda d: bind(lambda x: x.__setitem__(slice(1, 4), x[0:3]), ar(6, d))),
        ("Tensor.copy_", lambda d: bind(lambda x: x[1:4].copy_(x[0:3]), ar(6, d))),
        ("Tensor.add_", lambda d: bind(lambda x: x[1:4].add_(x[0:3]), ar(6, d))),
        ("torch.mul(out=)", lambda d: bind(lambda x: torch.mul(x[0:3], 2, out=x[1:4]), ar(6, d))),
        ("torch.cat(out=)", lambda d: bind(lambda x: torch.cat([x[0:2], x[3:5]], out=x[1:5]), ar(6, d))),
        ("Tensor.index_put_", lambda d: bind(lambda x, i: x[1:4].index_put_((i,), x[0:3]), ar(6, d),
                                             torch.arange(3).to(d))),
    ]
    stride0 = [  # a one-element tensor expanded to 4 (or 2 x 2) elements
        ("Tensor.add_", lambda d: bind(lambda e: e.add_(1), zero_expanded(d))),
        ("Tensor.mul_", lambda d: bind(lambda e: e.mul_(2), zero_expanded(d))),
        ("Tensor.copy_", lambda d: bind(lambda e, x: e.copy_(x), zero_expanded(d), ar(4, d))),
        ("torch.relu_", lambda d: bind(torch.relu_, zero_expanded(d))),
        ("Tensor.exp_", lambda d: bind(lambda e: e.exp_(), zero_expanded(d))),
        ("Tensor.clamp_", lambda d: bind(lambda e: e.clamp_(0, 1), zero_expanded(d))),
        ("Tensor.uniform_", lambda d: bind(lambda e: e.uniform_(), zero_expanded(d))),
        ("Tensor.addcmul_", lambda d: bind(lambda e, x: e.addcmul_(x, x), zero_expanded(d), ar(4, d))),
        ("torch.add(out=)", lambda d: bind(lambda e, x: torch.add(x, 1, out=e), zero_expanded(d), ar(4, d))),
        ("torch.sigmoid(out=)", lambda d: bind(lambda e, x: torch.sigmoid(x, out=e), zero_expanded(d), ar(4, d))),
        ("torch.mm(out=)", lambda d: bind(lambda e, x: torch.mm(x, x, out=e), zero_expanded(d, (2, 2)),
                                          ar(4, d, (2, 2)))),
    ]
    return ([(name, "example:overlap", make) for name, make in overlap]
            + [(name, "example:stride0", make) for name, make in stride0])


def sweep_overlap(writer: _Writer, runner: _Runner, samples_per_kind, subset_ops=None) -> None:
    for local, (name, kind, make) in enumerate(_issue_examples()):
        if subset_ops is not None and f"issue23:{name}" not in subset_ops:
            continue
        ordinal = writer.number(0, local)
        case_id = f"B:issue23:{name}:{kind}"
        if ordinal is None or not writer.wants(case_id):
            continue
        writer.begin(ordinal, case_id, f"issue23:{name}")
        _run_raising_case(writer, runner, "B", f"issue23:{name}", case_id, ordinal, make("cpu"), make(DEVICE),
                          {"kind": kind, "dtype": "float32"})
    runner.settle()
    for position, op in _op_db(writer, subset_ops, offset=1):
        if op.inplace_variant is None and not op.supports_out:
            continue
        dtype = _pick_dtype(op)
        if dtype is None:
            continue
        name = op.full_name
        for local, (kind, sample_index, make) in enumerate(_b_cases(op, dtype, samples_per_kind)):
            ordinal = writer.number(position, local)
            case_id = f"B:{name}:{kind}:{sample_index}"
            if ordinal is None or not writer.wants(case_id):
                continue
            writer.begin(ordinal, case_id, name)
            extra = {"kind": kind, "dtype": str(dtype).replace("torch.", "")}
            try:
                cpu_call = make("cpu")
                flagos_call = make(DEVICE)
            except Exception as error:  # noqa: BLE001
                runner.settle()
                writer.write(_case_record("B", name, case_id, "skipped", n=ordinal, **extra,
                                          reason=f"building the case failed: {_error_text(error)}"))
                continue
            _run_raising_case(writer, runner, "B", name, case_id, ordinal, cpu_call, flagos_call, extra)
        runner.settle()


# ---- sweep C -----------------------------------------------------------------------------------


def _reductions(subset_ops=None):
    """(name, callable, dtype) for every ReductionOpInfo and the extra torch functions."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.opinfo.core import ReductionOpInfo

    found = []
    for op in op_db:
        if isinstance(op, ReductionOpInfo):
            dtype = _pick_dtype(op)
            if dtype is not None:
                found.append((op.full_name, op, dtype))
    for name in EXTRA_REDUCTIONS:
        found.append((f"torch.{name}", getattr(torch, name), torch.float32))
    return [item for item in found if subset_ops is None or item[0] in subset_ops]


def sweep_empty_reductions(writer: _Writer, runner: _Runner, subset_ops=None) -> None:
    import torch

    for position, (name, function, dtype) in enumerate(_reductions()):
        if (subset_ops is not None and name not in subset_ops) or writer.skips_op(position):
            continue
        cases = [(shape, dim) for shape, dims in EMPTY_INPUTS for dim in dims]
        for local, (shape, dim) in enumerate(cases):
            ordinal = writer.number(position, local)
            case_id = f"C:{name}:{tuple(shape)}:dim={dim}"
            if ordinal is None or not writer.wants(case_id):
                continue
            writer.begin(ordinal, case_id, name)
            extra = {"dtype": str(dtype).replace("torch.", "")}
            kwargs = {} if dim is None else {"dim": dim}
            cpu_input = torch.empty(shape, dtype=dtype)
            try:
                function(cpu_input, **kwargs)
            except TypeError as error:
                writer.write(_case_record("C", name, case_id, "skipped", n=ordinal, **extra,
                                          reason=f"not callable this way on the CPU: {_error_text(error)}"))
                continue
            except Exception:  # noqa: BLE001 - an argument error: compared below
                pass
            flagos_input = cpu_input.to(DEVICE)
            _run_raising_case(writer, runner, "C", name, case_id, ordinal,
                              lambda: function(cpu_input, **kwargs),
                              lambda: function(flagos_input, **kwargs), extra)
        runner.settle()


def child_main(argv) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", required=True, choices=sorted(SWEEPS))
    parser.add_argument("--out", required=True)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--lenient", action="store_true")
    parser.add_argument("--samples", type=int, default=0, help="B: samples per op and kind (0: all)")
    parser.add_argument("--only", default=None, help="run this case id alone (a crash's rerun)")
    parser.add_argument("--ops", default=None, help="comma-separated OpInfo full names (default: all)")
    parser.add_argument("--skip-ops", default="", help="ops whose input generation crashed a child")
    parser.add_argument("--expect-torch-fl", default=None)
    args = parser.parse_args(argv)
    import warnings

    warnings.simplefilter("ignore")
    os.environ.setdefault("FLAGOS_DEVICE_CHECK", "1")
    import torch
    import torch_fl

    if args.expect_torch_fl and os.path.realpath(torch_fl.__file__) != os.path.realpath(args.expect_torch_fl):
        print(f"torch_fl imported from {torch_fl.__file__}, expected {args.expect_torch_fl}", file=sys.stderr)
        return 3
    torch.flagos.set_device(CURRENT)
    torch_fl.sim.set_mismatch_mode("error")
    torch_fl.sim.set_stream_mode("async")
    torch_fl.sim.drain_streams()
    if args.lenient:
        torch_fl.sim.set_lenient(True)
    writer = _Writer(args.out, args.start, args.only)
    runner = _Runner(writer)
    runner.settle()
    subset_ops = set(args.ops.split(",")) if args.ops else None
    if args.child == "A":
        sweep_error_inputs(writer, runner, subset_ops, set(filter(None, args.skip_ops.split(","))))
    elif args.child == "B":
        sweep_overlap(writer, runner, args.samples or None, subset_ops)
    else:
        sweep_empty_reductions(writer, runner, subset_ops)
    runner.settle()
    writer.write({"done": True, "last": writer.ordinal})
    return 0


# ----------------------------------------------------------------------------------------------
# Parent side: runs a sweep in child processes, records crashes, aggregates.


def torch_fl_location() -> str:
    """The torch_fl the calling process uses (imported or importable), for the children."""
    module = sys.modules.get("torch_fl")
    if module is not None:
        return os.path.realpath(module.__file__)
    spec = importlib.util.find_spec("torch_fl")
    if spec is None or spec.origin is None:
        raise RuntimeError("torch_fl is not importable")
    return os.path.realpath(spec.origin)


def _child_env(torch_fl_file: str, extra: dict | None = None) -> dict:
    """The children import the caller's torch_fl: its folder first on the path (and `python -P`:
    not the working directory, where another checkout's torch_fl may be)."""
    package_root = os.path.dirname(os.path.dirname(torch_fl_file))
    env = dict(os.environ)
    env.pop(CRASH_HOOK, None)
    env.update(extra or {})
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env.setdefault("FLAGOS_DEVICE_CHECK", "1")
    env.pop("FLAGOS_STRICT", None)  # the fallback is detected by its counter, not by an error
    return env


class SweepResult:
    def __init__(self, sweep: str, records: list, seconds: float, children: int, lenient: bool):
        self.sweep, self.records, self.seconds, self.children, self.lenient = (
            sweep, records, seconds, children, lenient)

    def counts(self) -> dict:
        return dict(collections.Counter(r["cls"] for r in self.records).most_common())

    def by_class(self) -> dict:
        """class -> op -> [records]"""
        table = collections.defaultdict(lambda: collections.defaultdict(list))
        for record in self.records:
            table[record["cls"]][record["op"]].append(record)
        return table

    def to_json(self) -> dict:
        return {"sweep": self.sweep, "lenient": self.lenient, "seconds": round(self.seconds, 1),
                "children": self.children, "counts": self.counts(), "cases": self.records}


def _run_child(sweep, folder, tag, env, torch_fl_file, *, start=0, lenient=False, samples=ALL_SAMPLES,
               ops=None, skip_ops=(), only=None, case_timeout=120.0) -> dict:
    """One child process. Returns {"done", "how" (how it ended, if not done), "begins", "records",
    "finished" (ids), "stderr"}."""
    out = os.path.join(folder, f"{tag}.jsonl")
    command = [sys.executable, "-P", os.path.abspath(__file__), "--child", sweep, "--out", out,
               "--start", str(start), "--samples", str(samples or 0), "--expect-torch-fl", torch_fl_file]
    if lenient:
        command.append("--lenient")
    if ops:
        command += ["--ops", ",".join(ops)]
    if skip_ops:
        command += ["--skip-ops", ",".join(skip_ops)]
    if only:
        command += ["--only", only]
    stderr_path = os.path.join(folder, f"{tag}.stderr")
    open(out, "w").close()
    with open(stderr_path, "w") as stderr:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        hung = _watch(process, out, case_timeout)
    result = {"done": False, "begins": [], "records": [], "finished": set()}
    with open(out) as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut by the crash
            if "begin" in record:
                result["begins"].append(record)
            elif "done" in record:
                result["done"] = process.returncode == 0
            elif "generated" in record:
                result["finished"].add(record["id"])
            else:
                result["records"].append(record)
                result["finished"].add(record["id"])
    with open(stderr_path) as handle:
        result["stderr"] = handle.read()[-1500:]
    if process.returncode == 3 and "torch_fl imported from" in result["stderr"]:
        raise RuntimeError(result["stderr"])
    result["how"] = (f"hung (killed after {case_timeout:.0f}s without progress)" if hung
                     else f"exit code {process.returncode}" + (" (a signal)" if process.returncode < 0 else ""))
    return result


def run_sweep(sweep: str, *, lenient: bool = False, samples: int | None = ALL_SAMPLES, ops=None,
              case_timeout: float = 120.0, max_children: int = 25, reruns: int = 5, log=None,
              env_extra: dict | None = None) -> SweepResult:
    """Runs sweep "A", "B" or "C" in child processes. A child that dies (or stops writing for
    `case_timeout` seconds) costs the case it was running a `crash` record; the next child starts
    after that case (after that op, if it died generating the op's inputs). The first `reruns`
    crashes are rerun alone in a fresh child, to tell a crash of the case itself from one that an
    earlier case prepared (heap corruption shows up later)."""
    torch_fl_file = torch_fl_location()
    env = _child_env(torch_fl_file, env_extra)
    records, skip_ops = {}, []
    start, children, started = 0, 0, time.monotonic()
    common = dict(lenient=lenient, samples=samples, case_timeout=case_timeout)
    with tempfile.TemporaryDirectory(prefix=f"errors_at_call_{sweep}_") as folder:
        while True:
            if children >= max_children:
                key = f"{sweep}:<child>:{children}"
                records[key] = _case_record(sweep, "<child>", key, "crash", n=start,
                                            detail=f"gave up after {children} child processes, at case {start}")
                break
            children += 1
            child = _run_child(sweep, folder, f"child{children}", env, torch_fl_file, start=start, ops=ops,
                               skip_ops=skip_ops, **common)
            records.update((r["id"], r) for r in child["records"])
            if child["done"]:
                break
            pending = [b for b in child["begins"] if b["id"] not in child["finished"]]
            if not pending:
                # Died between cases (a heap that an earlier case corrupted fails later): recorded
                # against the last case the child finished; the next child starts after it.
                done_here = [r for r in child["records"] if "n" in r]
                key = (f"{done_here[-1]['id']}:<after>" if done_here else f"{sweep}:<child>:{children}")
                records[key] = _case_record(
                    sweep, done_here[-1]["op"] if done_here else "<child>", key, "crash",
                    n=done_here[-1]["n"] if done_here else start, stderr=child["stderr"][-600:],
                    detail=f"the child died between cases ({child['how']}), after this one")
                if not done_here:
                    break  # no progress: the enumeration itself dies
                start = done_here[-1]["n"] + 1
                if log:
                    log(f"sweep {sweep}: died after {done_here[-1]['id']} ({child['how']}); a new child goes on")
                continue
            crashed = pending[-1]
            record = _case_record(sweep, crashed["op"], crashed["id"], "crash", n=crashed["begin"],
                                  detail=child["how"], stderr=child["stderr"][-600:])
            if crashed is child["begins"][0]:
                record["first"] = "the first case its child ran: no earlier flagos work in that process"
            if reruns > 0:
                reruns -= 1
                children += 1
                alone = _run_child(sweep, folder, f"child{children}", env, torch_fl_file, ops=[crashed["op"]],
                                   only=crashed["id"], **common)
                died = not alone["done"] and any(b["id"] == crashed["id"] for b in alone["begins"]
                                                 if b["id"] not in alone["finished"])
                record["alone"] = (f"crashes alone too ({alone['how']})" if died else
                                   "did not crash when rerun alone")
            records[crashed["id"]] = record
            if log:
                log(f"sweep {sweep}: {crashed['id']} crashed ({child['how']}); a new child goes on after it")
            if crashed["id"].endswith(":<generation>"):
                skip_ops.append(crashed["op"])
                start = crashed["begin"]
            else:
                start = crashed["begin"] + 1
    ordered = sorted(records.values(), key=lambda r: (r.get("n", 1 << 30), r["id"]))
    return SweepResult(sweep, ordered, time.monotonic() - started, children, lenient)


def _watch(process, out_path, case_timeout) -> bool:
    """Waits for the child; kills it if its output file stops growing for case_timeout seconds.
    Returns True if it was killed."""
    last_size, last_change = -1, time.monotonic()
    while process.poll() is None:
        time.sleep(0.2)
        size = os.path.getsize(out_path)
        if size != last_size:
            last_size, last_change = size, time.monotonic()
        elif time.monotonic() - last_change > case_timeout:
            process.kill()
            process.wait()
            return True
    return False


# ----------------------------------------------------------------------------------------------
# Verdicts (shared by the tests and the CLI)

# Cases whose `wrong-error` is accepted in B and C, by case id or id prefix ("B:op:kind"), with the
# reason. Add an entry only when the flagos message is right and the CPU's is not the contract.
KNOWN: dict = {
    "B:mode:out": "ATen's mode(out=) itself accepts CPU, CUDA and XPU tensors only (\"mode only supports CPU, "
                  "CUDA and XPU device type, got: flagos\"), before any check of its arguments; it raises "
                  "this for valid arguments on flagos too: the op has no flagos out= path, not a missing check",
}


# Record fields that mean a case leaked state: failed work that one synchronization did not clear,
# failed work or hazards found before a case began, a hazard, a changed current device.
LEAKS = ("sync_error_not_cleared", "stray_sync_errors", "stray_hazards", "hazards", "current_device_after",
         "current_device_was")


def known_reason(case_id: str):
    for key, reason in KNOWN.items():
        if case_id == key or case_id.startswith(key + ":"):
            return reason
    return None


def describe(record: dict) -> str:
    parts = [record["id"]]
    for key in ("expected", "cpu_error", "flagos_error", "sync_error", "value_diff", "fallback_ops",
                "reason", "detail", "first", "alone", "note", "hazards", "stray_sync_errors", "current_device_after"):
        if record.get(key):
            value = record[key]
            if isinstance(value, str):
                value = short(value, 200)
            parts.append(f"{key}={value}")
    return " | ".join(str(p) for p in parts)


def grouped(records: list, classes, per_op: int | None = None) -> str:
    """One line per case, grouped by class then op; at most `per_op` lines per op and class."""
    lines = []
    for cls in classes:
        chosen = [r for r in records if r["cls"] == cls]
        if not chosen:
            continue
        lines.append(f"[{cls}] {len(chosen)} case(s)")
        by_op = collections.defaultdict(list)
        for record in chosen:
            by_op[record["op"]].append(record)
        for op in sorted(by_op):
            cases = by_op[op]
            lines.append(f"  {op}: {len(cases)}")
            for record in cases[:per_op]:
                lines.append(f"    {describe(record)}")
            if per_op is not None and len(cases) > per_op:
                lines.append(f"    ... and {len(cases) - per_op} more")
    return "\n".join(lines)


def verdict(result: SweepResult, per_op: int | None = 3) -> list:
    """The problems that fail the sweep's test (issue 23, "Done when"); empty when it passes."""
    problems = []
    records = result.records
    counts = result.counts()
    bad = [r for r in records if r["cls"] in FAILING]
    if result.sweep == "A":
        kernel = [r for r in records if r["cls"] not in ("skipped", "fallback")]
        at_call = sum(r["cls"] == "at-call" for r in kernel)
        share = at_call / len(kernel) if kernel else 1.0
        if share < 0.99:
            problems.append(f"sweep A: {at_call} of {len(kernel)} error inputs with a flagos kernel raise at the "
                            f"call ({share:.1%} < 99%)")
        offending = bad + [r for r in records if r["cls"] == "wrong-error"]
    else:
        wrong = [r for r in records if r["cls"] == "wrong-error" and not known_reason(r["id"])]
        offending = bad + wrong
    if bad or (result.sweep != "A" and offending):
        listed = collections.Counter(r["cls"] for r in offending)
        known = counts.get("wrong-error", 0) - listed.get("wrong-error", 0) if result.sweep != "A" else 0
        problems.append(f"sweep {result.sweep}: " + ", ".join(
            f"{cls}: {listed[cls]}" for cls in FAILING + ("wrong-error",) if listed.get(cls))
            + (f" (and {known} known wrong-error, see KNOWN)" if known else ""))
    leaks = [r for r in records if any(r.get(k) for k in LEAKS)]
    if leaks:
        problems.append(f"sweep {result.sweep}: {len(leaks)} case(s) left failed work, hazards or another current "
                        "device behind (the harness must clear what it provokes):\n"
                        + "\n".join("    " + describe(r) for r in leaks))
    if problems:
        problems.append(grouped(offending, FAILING + ("wrong-error",), per_op))
    return problems


def summary(result: SweepResult, top_ops: int = 12) -> str:
    counts = result.counts()
    head = (f"sweep {result.sweep} ({SWEEPS[result.sweep]}{', lenient simulator' if result.lenient else ''}): "
            f"{len(result.records)} cases in {result.seconds:.0f}s, {result.children} child process(es)")
    lines = [head, f"  torch_fl: {torch_fl_location()}",
             "  " + ", ".join(f"{cls}: {n}" for cls, n in counts.items())]
    if result.sweep == "A":
        kernel = [r for r in result.records if r["cls"] not in ("skipped", "fallback")]
        at_call = sum(r["cls"] == "at-call" for r in kernel)
        lines.append(f"  with a flagos kernel: {at_call}/{len(kernel)} at the call"
                     f" ({at_call / max(len(kernel), 1):.1%})")
    table = result.by_class()
    for cls in counts:
        ops = table[cls]
        top = sorted(ops.items(), key=lambda item: (-len(item[1]), item[0]))
        via = sum(bool(r.get("fallback_ops")) for rs in ops.values() for r in rs)
        note = f", {via} through the CPU fallback" if via and cls != "fallback" else ""
        if cls == "cpu-allows":
            raising = sum("raises" in r.get("note", "") for rs in ops.values() for r in rs)
            differing = sum("values differ" in r.get("note", "") for rs in ops.values() for r in rs)
            note += f"; flagos raises in {raising}, values differ in {differing}"
        lines.append(f"  {cls} ({len(ops)} ops{note}): " + ", ".join(f"{op} {len(rs)}" for op, rs in top[:top_ops]))
        if len(top) > top_ops:
            lines[-1] += f", ... ({len(top) - top_ops} more ops)"
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))
