// Turning a failed ACL runtime call into a C++ exception (a Python
// RuntimeError) that names the call and carries the runtime's own message.
#pragma once

#include <c10/util/Exception.h>

#include <string>

#include "flagos/acl_api.h"

namespace flagos {

// The calling thread's last ACL error message. CANN's aclGetRecentErrMsg
// returns nullptr when there is none, and reading clears it: read it once,
// through this function, never straight into a stream.
inline std::string recent_error_message() {
  const char* message = aclGetRecentErrMsg();
  return message != nullptr && *message != '\0' ? std::string(message) : std::string("(no error message)");
}

}  // namespace flagos

#define FLAGOS_ACL_CHECK(call)                                                  \
  do {                                                                          \
    const aclError flagos_acl_status_ = (call);                                 \
    TORCH_CHECK(flagos_acl_status_ == ACL_SUCCESS, #call, " failed with ACL error ", \
                flagos_acl_status_, ": ", ::flagos::recent_error_message());    \
  } while (false)
