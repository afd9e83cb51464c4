// The boxed CPU fallback: ops without a flagos kernel run on the CPU.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace flagos {

// How many times each op went through the CPU fallback.
std::map<std::string, uint64_t> fallback_counts();
void reset_fallback_counts();

// FLAGOS_STRICT=1 (or this switch) makes the fallback raise instead.
void set_strict(bool strict);
bool strict();

}  // namespace flagos
