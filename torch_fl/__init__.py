"""torch_fl: Ascend NPUs as the PyTorch device ``flagos`` (PrivateUse1).

``import torch_fl`` loads the backend, renames PrivateUse1 to ``flagos`` and
registers ``torch.flagos``. On machines without NPUs the backend runs on the
simulated Ascend runtime that ships with it (see ``torch_fl.sim``).
"""

import atexit
import time


# Defined before `import torch`: `import torch_fl` imports torch, whose
# autoload then looks this up on the half-imported torch_fl (and, finding
# it, imports nothing more).
def _autoload() -> None:
    """The `torch.backends` entry point (setup.py): `import torch` imports torch_fl, so
    that any code that imports torch sees the flagos device (TORCH_DEVICE_BACKEND_AUTOLOAD=0
    turns it off). Importing this module does all the work."""


import torch  # noqa: E402

from torch_fl import _C  # loads libflagos_backend.so and the runtime

# Fail at import, with the runtime's own message, when the runtime cannot
# report its devices (e.g. FLAGOS_SIM_DEVICES=abc).
_C._device_count()

torch.utils.rename_privateuse1_backend("flagos")

from torch_fl import flagos  # noqa: E402  (needs the rename)

torch._register_device_module("flagos", flagos)
torch.utils.generate_methods_for_privateuse1_backend(
    for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True
)

from torch_fl import sim  # noqa: E402
from torch_fl import _compile  # noqa: E402,F401  (torch.compile runs flagos graphs as ATen calls)

if torch.distributed.is_available():
    from torch_fl import distributed  # noqa: E402,F401  (registers the "hccl" backend)

from torch_fl.integrations import hf as _hf  # noqa: E402

# accelerate, transformers and diffusers learn the flagos device when they
# are imported, whichever comes first (docs/huggingface.md).
_hf.install()


@atexit.register
def _let_autograd_workers_finish() -> None:
    # After a backward pass on a flagos device, PyTorch's autograd worker
    # thread for that device may still be dropping the last reference to the
    # finished graph task, which takes the GIL; if the interpreter is
    # finalizing by then, Python ends that thread mid-destructor and the
    # process aborts ("terminate called without an active exception").
    # Releasing the GIL briefly before finalization lets the worker finish.
    time.sleep(0.05)

__all__ = ["flagos", "sim"]
