// The boxed CPU fallback: ops without a flagos kernel run on the CPU.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace flagos {

class DtypeUnsupported;

// Counts and warns one CPU fallback of `op_name` for a dtype its ACLNN
// operator rejected (strict mode raises instead), for a kernel that runs
// the rest of the call on the CPU itself (the copies; every other kernel
// gets this from with_dtype_fallback, aten/dtype_fallback.h).
void note_dtype_fallback(const std::string& op_name, const DtypeUnsupported* reason);

// How many times each op went through the CPU fallback.
std::map<std::string, uint64_t> fallback_counts();
void reset_fallback_counts();

// FLAGOS_STRICT=1 (or this switch) makes the fallback raise instead.
void set_strict(bool strict);
bool strict();

}  // namespace flagos
