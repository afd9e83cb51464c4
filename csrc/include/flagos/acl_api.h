// The part of CANN's C API that torch_fl uses: the ACL runtime (libascendcl),
// the ACLNN argument API (libnnopbase) and the status codes of both.
//
// Project code reaches Ascend only through this header. Without
// FLAGOS_WITH_CANN it declares the subset itself (acl_subset_types.h,
// acl_subset_functions.h), with CANN's names, prototypes and enum values, and
// the simulator (csrc/sim) implements it. With FLAGOS_WITH_CANN it includes
// CANN's own headers instead, so the same backend sources build against a
// real CANN install.
#pragma once

#ifdef FLAGOS_WITH_CANN
#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#else
#include "flagos/acl_subset_types.h"
#include "flagos/acl_subset_functions.h"
#endif

#ifdef __cplusplus
namespace flagos {
// The success status of ACLNN calls. CANN names it ACLNN_SUCCESS in
// aclnn/opdev/op_errno.h, which acl.h and acl_meta.h do not include, so the
// backend compares against this name in both builds.
inline constexpr aclnnStatus kAclnnSuccess = 0;
// ACLNN_ERR_PARAM_INVALID (op_errno.h too): an operator's phase 1 rejected
// its arguments (a dtype or rank it does not take, say). Same value as
// acl_subset_types.h's, which --verify-cann compares with CANN's.
inline constexpr aclnnStatus kAclnnErrParamInvalid = 161002;
}  // namespace flagos
#endif
