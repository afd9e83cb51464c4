"""PyTorch's own test files in upstream/ are third-party data that
run_device_generic.py runs in subprocesses; the project's pytest run must not
collect them itself."""

collect_ignore = ["upstream"]
