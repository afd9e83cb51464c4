"""torch_fl: Ascend NPUs as the PyTorch device ``flagos`` (PrivateUse1).

``import torch_fl`` loads the backend, renames PrivateUse1 to ``flagos`` and
registers ``torch.flagos``. On machines without NPUs the backend runs on the
simulated Ascend runtime that ships with it (see ``torch_fl.sim``).
"""

import torch

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

__all__ = ["flagos", "sim"]
