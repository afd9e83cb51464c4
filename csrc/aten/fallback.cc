#include "aten/fallback.h"

#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace flagos {
namespace {

std::atomic<bool> strict_mode{[] {
  const char* value = std::getenv("FLAGOS_STRICT");
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}()};

std::mutex counts_mutex;
std::map<std::string, uint64_t> counts;

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::OperatorName& name = op.schema().operator_name();
  const std::string op_name =
      name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
  TORCH_CHECK(!strict_mode.load(), "flagos: ", op_name,
              " has no flagos kernel, and strict mode (FLAGOS_STRICT=1) forbids the CPU "
              "fallback");
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(counts_mutex);
    first = counts.find(op_name) == counts.end();
    ++counts[op_name];
  }
  if (first) {
    TORCH_WARN("flagos: ", op_name, " has no flagos kernel; it runs on the CPU (warned once per op)");
  }
  at::native::cpu_fallback(op, stack);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

}  // namespace

std::map<std::string, uint64_t> fallback_counts() {
  std::lock_guard<std::mutex> lock(counts_mutex);
  return counts;
}

void reset_fallback_counts() {
  std::lock_guard<std::mutex> lock(counts_mutex);
  counts.clear();
}

void set_strict(bool value) { strict_mode.store(value); }
bool strict() { return strict_mode.load(); }

}  // namespace flagos
