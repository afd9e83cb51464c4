"""Instructions per tiny op, counted by valgrind's callgrind: the layer's
cost without the machine's speed in it.

    python -m benchmarks.instructions [--ops 300]

Time on this VM moves by up to 2x between runs (docs/performance.md);
instruction counts do not, so they show what a change to the launch path
saves. Each op runs `--ops` times with a synchronize after each (so that the
stream worker is idle when the next launch queues) between two calls that
make callgrind write a profile, one file per thread (`--separate-threads`).
From the calling thread's profile of each op it prints, per op:

- `kernel`: the outermost flagos kernel, inclusive (the most expensive
  function of libflagos_backend.so);
- `phase2`: the ACLNN phase-2 calls (the simulator's host-side work);
- `layer`: kernel - phase2, this project's own instructions.

Needs valgrind (not in CI); takes about two minutes.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

# The breakdown's tiny ops (benchmarks/breakdown.py), the same tensors.
OPS = ("add_4", "add_scalar_4", "relu_4", "mm_16x16", "softmax_8x64")
_MARK = "os_getppid"  # the C function behind os.getppid(): a dump boundary


def _loops(n: int) -> None:
    """Each op's warm-up, then `n` calls between two dump boundaries."""
    import torch

    from benchmarks import breakdown

    ops = breakdown._ops()
    for name in OPS:
        make, fn, _, _ = ops[name]
        args = make("flagos:0")
        for _ in range(50):  # warm: executor cache, allocator, snapshots
            fn(*args)
        torch.flagos.synchronize()
        os.getppid()  # the op's profile starts here
        for _ in range(n):
            fn(*args)
            torch.flagos.synchronize()
        os.getppid()  # and ends here


_LINE = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$")


def _inclusive(path: str) -> list[tuple[int, str]]:
    out = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
        capture_output=True, text=True, check=True,
    ).stdout
    rows = []
    for line in out.splitlines():
        m = _LINE.match(line)
        if m:
            rows.append((int(m.group(1).replace(",", "")), m.group(2)))
    return rows


def count(n: int) -> dict:
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        raise SystemExit("benchmarks.instructions needs valgrind (callgrind and callgrind_annotate)")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", f"--dump-before={_MARK}*",
               "--separate-threads=yes", sys.executable, "-m", "benchmarks.instructions", "--child", str(n)]
        subprocess.run(cmd, check=True, capture_output=True)
        # Dumps of the calling thread, each up to a boundary: start-up and the
        # first warm-up, then the first op's loop, the next warm-up, ...
        files = sorted(glob.glob(out + ".*-01"), key=lambda f: int(f.rsplit(".", 1)[1].split("-")[0]))
        result = {}
        for name, path in zip(OPS, files[1::2]):
            rows = _inclusive(path)
            kernel = max((v for v, fn in rows if "libflagos_backend.so" in fn), default=0)
            phase2 = sum(v for v, fn in rows
                         if re.search(r":aclnn[A-Za-z0-9]+ \[", fn) and "GetWorkspaceSize" not in fn)
            result[name] = {"kernel": kernel / n, "phase2": phase2 / n, "layer": (kernel - phase2) / n}
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=300, help="calls of each op in its profile")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        import torch
        import torch_fl  # noqa: F401

        from benchmarks import breakdown

        torch.set_num_threads(breakdown.THREADS)  # the profiled process's own setting
        _loops(args.child)
        return
    print(f"{'op':12s} {'kernel':>8s} {'phase2':>8s} {'layer':>8s}  (instructions per op)")
    for name, r in count(args.ops).items():
        print(f"{name:12s} {r['kernel']:8.0f} {r['phase2']:8.0f} {r['layer']:8.0f}")


if __name__ == "__main__":
    main()
