"""Draw a Chrome trace exported by torch.profiler as an SVG timeline.

    python docs/render_trace.py TRACE.json OUT.svg

One row per host thread (its outermost ops) and one per device track
(process "flagos:N", thread "stream S"), kernels as boxes colored by
operator. No dependencies beyond the standard library: this makes
docs/images/profiler-trace.svg from examples/profile_training_step.py.
"""

import json
import sys
from html import escape

WIDTH, LEFT, ROW, GAP, TOP = 1000, 130, 26, 10, 40
PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"]


def rows_of(trace):
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in trace["traceEvents"]
             if e.get("ph") == "M" and e["name"] == "thread_name"}
    procs = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e.get("ph") == "M" and e["name"] == "process_name"}
    kernels = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    host = [e for e in events if e.get("cat") == "cpu_op"]
    rows = []
    # A row per host thread (the main one, autograd's per device): its outermost ops.
    for thread in sorted({e["tid"] for e in host}, key=lambda t: min(e["ts"] for e in host if e["tid"] == t)):
        top, end = [], -1.0
        for e in sorted((e for e in host if e["tid"] == thread), key=lambda e: e["ts"]):
            if e["ts"] >= end:
                top.append(e)
                end = e["ts"] + e["dur"]
        rows.append((f"host thread {len(rows)}", top))
    for track in sorted({(e["pid"], e["tid"]) for e in kernels}):
        label = f"{procs.get(track[0], track[0])} {names.get(track, track[1])}"
        rows.append((label, [e for e in kernels if (e["pid"], e["tid"]) == track]))
    return rows


def render(trace):
    rows = rows_of(trace)
    spans = [e for _, row in rows for e in row]
    t0 = min(e["ts"] for e in spans)
    t1 = max(e["ts"] + e["dur"] for e in spans)
    scale = (WIDTH - LEFT - 10) / max(t1 - t0, 1e-9)
    colors = {}
    height = TOP + len(rows) * (ROW + GAP) + 70
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" font-size="14">torch.profiler trace: host threads and flagos device streams '
           f'({(t1 - t0) / 1000:.1f} ms)</text>']
    for i, (label, row) in enumerate(rows):
        y = TOP + i * (ROW + GAP)
        out.append(f'<text x="10" y="{y + ROW / 2 + 4}">{escape(label)}</text>')
        out.append(f'<rect x="{LEFT}" y="{y}" width="{WIDTH - LEFT - 10}" height="{ROW}" fill="#f4f4f4"/>')
        for e in row:
            host_row = label.startswith("host")
            color = "#bab0ac" if host_row else colors.setdefault(e["name"], PALETTE[len(colors) % len(PALETTE)])
            x = LEFT + (e["ts"] - t0) * scale
            w = max(e["dur"] * scale, 0.8)
            out.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{ROW}" fill="{color}" '
                       f'stroke="white" stroke-width="0.3"><title>{escape(e["name"])} {e["dur"]:.1f} us</title></rect>')
    y = TOP + len(rows) * (ROW + GAP) + 10
    x = LEFT
    for name, color in colors.items():
        w = 14 + 7 * len(name) + 16
        if x + w > WIDTH:
            x, y = LEFT, y + 18
        out.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{x + 14}" y="{y + 9}">{escape(name)}</text>')
        x += w
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        svg = render(json.load(f))
    with open(sys.argv[2], "w") as f:
        f.write(svg)
