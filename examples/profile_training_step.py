"""Profile one training step of a small MLP on flagos:0 and one on flagos:1.

    python examples/profile_training_step.py [TRACE.json]

Prints the profiler's table (device time columns included) and writes the
Chrome trace (default /tmp/flagos_trace.json): open it in chrome://tracing
or https://ui.perfetto.dev, or draw it with docs/render_trace.py.
"""

import sys

import torch
import torch_fl  # noqa: F401  (registers the flagos device and its profiler plugin)
from torch.profiler import ProfilerActivity, profile


def make(device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, opt, torch.randn(32, 64).to(device), torch.randn(32, 10).to(device)


def step(model, opt, x, y):
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()


def main(path):
    setups = [make("flagos:0"), make("flagos:1")]
    for s in setups:
        step(*s)  # warm up: executor cache, allocator
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        for s in setups:
            step(*s)
    print(prof.key_averages().table(sort_by="device_time_total", row_limit=12))
    prof.export_chrome_trace(path)
    print(f"Chrome trace: {path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/flagos_trace.json")
