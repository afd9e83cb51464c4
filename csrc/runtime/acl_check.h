// Turning a failed ACL runtime call into a C++ exception (a Python
// RuntimeError) that names the call and carries the runtime's own message.
#pragma once

#include <c10/util/Exception.h>

#include "flagos/acl_api.h"

#define FLAGOS_ACL_CHECK(call)                                                  \
  do {                                                                          \
    const aclError flagos_acl_status_ = (call);                                 \
    TORCH_CHECK(flagos_acl_status_ == ACL_SUCCESS, #call, " failed with ACL error ", \
                flagos_acl_status_, ": ", ::aclGetRecentErrMsg());              \
  } while (false)
