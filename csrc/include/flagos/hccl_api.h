// The part of CANN's collective-communication library (HCCL, libhccl) that
// torch_fl's torch.distributed backend uses.
//
// Project code reaches HCCL only through this header, as it reaches the ACL
// runtime only through acl_api.h. Without FLAGOS_WITH_CANN it declares the
// subset itself (hccl_subset_types.h, hccl_subset_functions.h), with CANN's names, prototypes and enum
// values, and the simulator (csrc/sim/hccl) implements it across processes
// on one machine. With FLAGOS_WITH_CANN it includes CANN's own header, so
// the same backend sources build against a real CANN install.
#pragma once

#include "flagos/acl_api.h"

#ifdef FLAGOS_WITH_CANN
#include <hccl/hccl.h>
#include <hccl/hccl_types.h>
#else
#include "flagos/hccl_subset_types.h"
#include "flagos/hccl_subset_functions.h"
#endif
