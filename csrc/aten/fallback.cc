#include "aten/fallback.h"

#include <ATen/core/op_registration/adaption.h>
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

namespace flagos {
namespace {

std::atomic<bool> strict_mode{[] {
  const char* value = std::getenv("FLAGOS_STRICT");
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}()};

std::mutex counts_mutex;
std::map<std::string, uint64_t> counts;

// The fallback moves every argument to the CPU, which would silently accept
// tensors of two flagos devices; a kernel of ours would raise, and so does
// CUDA. Check as a kernel would.
void check_one_flagos_device(const c10::OperatorHandle& op, const torch::jit::Stack& stack,
                             const std::string& op_name) {
  const size_t num_args = op.schema().arguments().size();
  std::optional<c10::Device> common;
  auto visit = [&](const at::Tensor& tensor, const std::string& arg) {
    if (tensor.defined() && tensor.is_privateuseone()) {
      c10::impl::check_and_update_common_device(common, tensor, op_name.c_str(), arg.c_str());
    }
  };
  for (size_t i = 0; i < num_args; ++i) {
    const c10::IValue& value = stack[stack.size() - num_args + i];
    const std::string& arg = op.schema().arguments()[i].name();
    if (value.isTensor()) {
      visit(value.toTensor(), arg);
    } else if (value.isTensorList()) {
      for (const at::Tensor& tensor : value.toTensorVector()) visit(tensor, arg);
    } else if (value.isOptionalTensorList()) {
      for (const std::optional<at::Tensor>& tensor : value.toOptionalTensorList().vec()) {
        if (tensor.has_value()) visit(*tensor, arg);
      }
    }
  }
}

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::OperatorName& name = op.schema().operator_name();
  const std::string op_name =
      name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
  check_one_flagos_device(op, *stack, op_name);
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
