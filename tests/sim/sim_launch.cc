// The simulator's own tests: launch validation: what a launch on the wrong device, stream or workspace does, executors, phase-1 checks, faults.
// (harness: sim_harness.h.)
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "flagos/aclnn/aclnnCast.h"
#include "flagos/aclnn/aclnnConstantPadNd.h"
#include "flagos/aclnn/aclnnConvolution.h"
#include "flagos/aclnn/aclnnInplaceZero.h"
#include "flagos/aclnn/aclnnMaskedSelect.h"
#include "flagos/aclnn/aclnnReflectionPad1d.h"
#include "flagos/aclnn/aclnnReplicationPad1d.h"
#include "flagos/aclnn/aclnnReplicationPad2dBackward.h"
#include "flagos/aclnn/aclnnUpsampleBilinear2d.h"
#include "flagos/aclnn/aclnnUpsampleNearest2d.h"
#include "flagos/aclnn/aclnnUpsampleNearest2dV2.h"
#include "flagos/aclnn/aclnnUpsampleNearestExact2d.h"
#include "sim_harness.h"

namespace {

using namespace fsim_test;

// The seed bug: tensors of device 0, launched while device 1 is current.
TEST(launch_rejects_tensors_of_another_device) {
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  self.write<float>({1, 2, 3});
  other.write<float>({1, 1, 1});
  out.write<float>({-1, -1, -1});
  setDevice(1);
  fsimResetStats();
  const int64_t executors = stat("live_executors");
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_EQ(lastError(),
           "aclnnAdd: argument 'self' lives on device 0 but the launch runs on device 1 "
           "(current device 1, stream of device 1)");
  CHECK_VALUES(out.read<float>(), -1, -1, -1);  // the kernel did not run
  CHECK_EQ(stat("rejected_launches"), 1);
  CHECK_EQ(stat("mismatched_launches"), 1);
  CHECK_EQ(stat("launches", "1"), 0);
  CHECK_EQ(stat("launches", "0"), 0);
  CHECK_EQ(stat("live_executors"), executors);  // phase 2 destroyed it anyway

  setDevice(0);  // the fix: make the tensors' device current
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
  CHECK_VALUES(out.read<float>(), 2, 3, 4);
  CHECK_EQ(stat("launches", "0"), 1);
}

TEST(launch_rejects_output_of_another_device) {
  DevTensor self(2, {3}), other(2, {3}), out(3, {3});
  setDevice(2);
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("aclnnAdd", "argument 'out' lives on device 3", "runs on device 2");
}

TEST(launch_rejects_stream_of_another_device) {
  setDevice(2);
  aclrtStream s2 = nullptr;
  CHECK_EQ(aclrtCreateStream(&s2), ACL_SUCCESS);
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  CHECK_EQ(add(self, other, 1.0f, out, s2), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("aclnnAdd", "stream belongs to device 2", "runs on device 0");
  aclrtStream s0 = nullptr;
  CHECK_EQ(aclrtCreateStream(&s0), ACL_SUCCESS);
  CHECK_EQ(add(self, other, 1.0f, out, s0), ACLNN_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(s0), ACL_SUCCESS);
  setDevice(2);  // a stream is destroyed from its own device
  CHECK_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
}

TEST(launch_rejects_workspace_of_another_device) {
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  CHECK_EQ(add(self, other, 1.0f, out, nullptr, 1), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("aclnnAdd", "workspace lives on device 1", "runs on device 0");
}

// The "wrapped number" trap: a host address passed as a tensor.
TEST(launch_rejects_host_pointer) {
  setDevice(0);
  DevTensor self(0, {3}), out(0, {3});
  std::vector<float> host = {0.5f, 0.5f, 0.5f};
  int64_t dims[] = {3}, strides[] = {1};
  aclTensor* other = aclCreateTensor(dims, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 1, host.data());
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other, one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("aclnnAdd", "argument 'other'", "is not device memory");
  aclDestroyTensor(other);
}

TEST(launch_rejects_thread_without_device) {
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  DeviceMem workspace(0, 64);
  ScalarPtr one = floatScalar(1);
  aclnnStatus rc = ACLNN_SUCCESS;
  std::string message;
  onFreshThread([&] {
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    if (aclnnAddGetWorkspaceSize(self.get(), other.get(), one.get(), out.get(), &ws, &e) != ACLNN_SUCCESS) return;
    rc = aclnnAdd(workspace.get(), ws, e, nullptr);
    message = lastError();
  });
  CHECK_EQ(rc, ACLNN_ERR_RUNTIME_ERROR);
  CHECK(message.find("no current device") != std::string::npos);
}

TEST(launch_rejects_tensor_outside_its_allocation) {
  setDevice(0);
  fsimResetStats();
  DevTensor small(0, {4}), out(0, {8});
  aclTensor* tooLong = small.view({8}, {1}, 0);
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(tooLong, tooLong, one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnAdd", "argument 'self'", "outside its allocation");
  aclDestroyTensor(tooLong);
  CHECK_EQ(stat("rejected_launches"), 1);
  CHECK_EQ(stat("mismatched_launches"), 0);
}

TEST(launch_checks_the_workspace) {
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  ScalarPtr one = floatScalar(1);
  DeviceMem tiny(0, 8);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  auto phase1 = [&] {
    CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other.get(), one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  };
  phase1();
  CHECK_EQ(aclnnAdd(nullptr, 0, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnAdd", "workspaceSize 0", "64");
  phase1();
  CHECK_EQ(aclnnAdd(nullptr, ws, e, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  CHECK_ERR_HAS("workspace is nullptr");
  // ... which destroys the executor, even a repeatable one (as CANN's).
  const int64_t executors = stat("live_executors");
  phase1();
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  CHECK_EQ(stat("live_executors"), executors + 1);
  CHECK_EQ(aclnnAdd(nullptr, ws, e, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  CHECK_EQ(stat("live_executors"), executors);
  phase1();
  CHECK_EQ(aclnnAdd(tiny.get(), ws, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("workspace", "overruns");
  phase1();
  std::vector<char> host(ws);
  CHECK_EQ(aclnnAdd(host.data(), ws, e, nullptr), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("workspace", "is not device memory");
}

TEST(nan_mode_poisons_outputs_and_succeeds) {
  NanMode nan;
  CHECK_EQ(fsimGetMismatchMode(), FSIM_MISMATCH_NAN);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  DevTensor a(0, {2}, ACL_INT32), c(0, {2}, ACL_INT32), half(0, {3}, ACL_FLOAT16);
  self.write<float>({1, 2, 3});
  setDevice(1);
  fsimResetStats();
  CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
  for (float v : out.read<float>()) CHECK(std::isnan(v));
  CHECK_EQ(add(a, a, 1.0f, c), ACLNN_SUCCESS);  // poisoned before any kernel could object
  CHECK_VALUES(c.read<int32_t>(), -1, -1);  // 0xFF bytes
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), ACL_FLOAT16, half.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnCast, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(half.read<uint16_t>(), 0x7E00, 0x7E00, 0x7E00);
  CHECK_VALUES(self.read<float>(), 1, 2, 3);  // inputs untouched
  CHECK_EQ(stat("mismatched_launches"), 3);
  CHECK_EQ(stat("rejected_launches"), 0);
  CHECK_EQ(stat("launches", "1"), 0);
}

TEST(executor_is_single_use_unless_repeatable) {
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  ScalarPtr one = floatScalar(1);
  DeviceMem workspace(0, 64);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other.get(), one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclnnAdd(workspace.get(), ws, e, nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclnnAdd(workspace.get(), ws, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnAdd", "not live");
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_ERR_PARAM_INVALID);
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_ERR_PARAM_INVALID);

  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other.get(), one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclnnCast(workspace.get(), ws, e, nullptr), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnCast", "built by aclnnAddGetWorkspaceSize");
  CHECK_EQ(aclnnAdd(workspace.get(), ws, nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
}

TEST(repeatable_executor_is_rebound_and_relaunched) {
  setDevice(0);
  const int64_t executors = stat("live_executors");
  DevTensor self(0, {3}), other(0, {3}), other2(0, {3}), out(0, {3}), out2(0, {3});
  self.write<float>({1, 2, 3});
  other.write<float>({10, 10, 10});
  other2.write<float>({100, 100, 100});
  out2.write<float>({0, 0, 0});
  // The executor uses these very aclTensor objects until it is destroyed.
  aclTensor* selfT = self.view({3}, {1}, 0);
  aclTensor* otherT = other.view({3}, {1}, 0);
  aclTensor* outT = out.view({3}, {1}, 0);
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(selfT, otherT, one.get(), outT, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(out.read<float>(), 11, 12, 13);

  // Rebinding updates the objects bound at phase 1, by index.
  CHECK_EQ(aclSetInputTensorAddr(e, 1, otherT, other2.data()), ACLNN_SUCCESS);  // 'other'
  CHECK_EQ(aclSetOutputTensorAddr(e, 0, outT, out2.data()), ACLNN_SUCCESS);    // 'out'
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(out2.read<float>(), 101, 102, 103);
  CHECK_VALUES(out.read<float>(), 11, 12, 13);

  // nnopbase rejects a null tensor (561103); any other aclTensor than the
  // bound one would change while the executor kept reading the old address.
  CHECK_EQ(aclSetInputTensorAddr(e, 1, nullptr, other2.data()), ACLNN_ERR_INNER_NULLPTR);
  CHECK_ERR_HAS("aclSetInputTensorAddr", "tensor is nullptr");
  CHECK_EQ(aclSetOutputTensorAddr(e, 0, nullptr, out2.data()), ACLNN_ERR_INNER_NULLPTR);
  CHECK_EQ(aclSetInputTensorAddr(nullptr, 1, otherT, other2.data()), ACLNN_ERR_INNER_NULLPTR);
  aclTensor* foreign = other2.view({3}, {1}, 0);
  CHECK_EQ(aclSetInputTensorAddr(e, 1, foreign, other2.data()), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclSetInputTensorAddr", "is not the input 1", "executor was built with");
  CHECK_EQ(aclSetInputTensorAddr(e, 0, otherT, other2.data()), ACLNN_ERR_PARAM_INVALID);  // right tensor, wrong index
  aclDestroyTensor(foreign);
  CHECK_EQ(aclSetInputTensorAddr(e, 2, otherT, other2.data()), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclSetInputTensorAddr", "index 2", "2 inputs");
  CHECK_EQ(aclSetOutputTensorAddr(e, 1, outT, out2.data()), ACLNN_ERR_PARAM_INVALID);

  // A rebinding to another device is caught at the next launch.
  DevTensor elsewhere(1, {3});
  CHECK_EQ(aclSetInputTensorAddr(e, 0, selfT, elsewhere.data()), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("argument 'self' lives on device 1");
  CHECK_EQ(stat("live_executors"), executors + 1);  // a failed launch keeps it too

  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  CHECK_EQ(stat("live_executors"), executors);
  CHECK_EQ(aclSetInputTensorAddr(e, 0, selfT, other2.data()), ACLNN_ERR_PARAM_INVALID);
  for (aclTensor* t : {selfT, otherT, outT}) aclDestroyTensor(t);
}

// A repeatable executor relaunched with the same addresses, workspace,
// stream and current device skips the argument check while nothing it
// depended on changed; a change makes the next launch check again.
TEST(relaunch_is_checked_again_after_a_change) {
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3});
  self.write<float>({1, 2, 3});
  other.write<float>({10, 10, 10});
  aclTensor* selfT = self.view({3}, {1}, 0);
  void* outMem = nullptr;
  CHECK_EQ(aclrtMalloc(&outMem, 3 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  const int64_t dims[] = {3}, strides[] = {1}, storage = 3;
  aclTensor* outT = aclCreateTensor(dims, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, &storage, 1, outMem);
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(selfT, other.get(), one.get(), outT, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  DeviceMem workspace(0, ws);
  auto relaunch = [&]() -> int32_t {
    const aclnnStatus status = aclnnAdd(workspace.get(), ws, e, nullptr);
    return status != ACLNN_SUCCESS ? status : aclrtSynchronizeStream(nullptr);
  };
  CHECK_EQ(relaunch(), ACLNN_SUCCESS);
  CHECK_EQ(relaunch(), ACLNN_SUCCESS);  // nothing changed

  setDevice(1);  // the current device
  CHECK_EQ(relaunch(), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("aclnnAdd", "lives on device 0");
  setDevice(0);
  CHECK_EQ(relaunch(), ACLNN_SUCCESS);

  CHECK_EQ(aclrtFree(outMem), ACL_SUCCESS);  // memory of a bound tensor
  CHECK_EQ(relaunch(), ACLNN_ERR_RUNTIME_ERROR);
  CHECK_ERR_HAS("argument 'out'", "is not device memory");
  DevTensor out2(0, {3});
  CHECK_EQ(aclSetOutputTensorAddr(e, 0, outT, out2.data()), ACLNN_SUCCESS);
  CHECK_EQ(relaunch(), ACLNN_SUCCESS);
  CHECK_EQ(relaunch(), ACLNN_SUCCESS);
  CHECK_VALUES(out2.read<float>(), 11, 12, 13);

  aclDestroyTensor(selfT);  // a bound aclTensor
  CHECK_EQ(relaunch(), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("argument 'self'", "was destroyed after phase 1");
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  aclDestroyTensor(outT);
}

// nnopbase's executors read the caller's aclTensor objects at phase 2: one
// destroyed after phase 1 would be a use after free on CANN.
TEST(executor_needs_its_tensors_until_launched) {
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3});
  aclTensor* selfT = self.view({3}, {1}, 0);
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(selfT, other.get(), one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  aclDestroyTensor(selfT);
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnAdd", "argument 'self'", "was destroyed after phase 1");
  // Even when a new aclTensor reuses the address.
  aclTensor* first = self.view({3}, {1}, 0);
  CHECK_EQ(aclnnAddGetWorkspaceSize(first, other.get(), one.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  aclDestroyTensor(first);
  std::vector<aclTensor*> fresh;
  for (int i = 0; i < 64; ++i) fresh.push_back(self.view({3}, {1}, 0));
  CHECK_EQ(launch(aclnnAdd, ws, e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("was destroyed after phase 1");
  for (aclTensor* t : fresh) aclDestroyTensor(t);
}

// An operator whose output shape depends on the data cannot be replayed:
// CANN refuses to make its executor repeatable (561000).
TEST(data_dependent_operator_is_not_repeatable) {
  setDevice(0);
  DevTensor self(0, {4}), mask(0, {4}, ACL_BOOL), out(0, {4});
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnMaskedSelectGetWorkspaceSize(self.get(), mask.get(), out.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_ERR_INNER);
  CHECK_EQ(launch(aclnnMaskedSelect, ws, e), ACLNN_SUCCESS);  // once, then it is gone
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_ERR_PARAM_INVALID);
}

TEST(phase1_reports_bad_arguments) {
  setDevice(0);
  const int64_t executors = stat("live_executors");
  DevTensor self(0, {3}), out(0, {3}), u16(0, {3}, ACL_UINT16);
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(nullptr, self.get(), one.get(), out.get(), &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
  CHECK_EQ(lastError(), "aclnnAdd: argument 'self' is nullptr");
  CHECK(e == nullptr);
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), self.get(), nullptr, out.get(), &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
  CHECK_ERR_HAS("'alpha'");
  CHECK_EQ(aclnnAddGetWorkspaceSize(u16.get(), self.get(), one.get(), out.get(), &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnAdd", "argument 'self'", "ACL_UINT16", "ACL_FLOAT");
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), self.get(), one.get(), out.get(), nullptr, &e),
           ACLNN_ERR_PARAM_NULLPTR);
  CHECK_ERR_HAS("workspaceSize");
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), self.get(), one.get(), out.get(), &ws, nullptr),
           ACLNN_ERR_PARAM_NULLPTR);
  CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), static_cast<aclDataType>(42), out.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnCast", "'dtype'");
  CHECK_EQ(aclnnInplaceZeroGetWorkspaceSize(nullptr, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
  CHECK_ERR_HAS("aclnnInplaceZero", "'selfRef'");
  // CANN's operators take at most 8 dimensions.
  std::vector<int64_t> nine(9, 1), nineStrides(9, 1);
  aclTensor* deep = self.view(nine, nineStrides, 0);
  CHECK_EQ(aclnnInplaceZeroGetWorkspaceSize(deep, &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnInplaceZero", "9 dimensions", "at most 8");
  aclDestroyTensor(deep);
  aclTensor* backwards = self.view({3}, {-1}, 2);
  CHECK_EQ(aclnnInplaceZeroGetWorkspaceSize(backwards, &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("stride -1");
  aclDestroyTensor(backwards);
  CHECK_EQ(stat("live_executors"), executors);
}

using IntArrayPtr = std::unique_ptr<aclIntArray, decltype(&aclDestroyIntArray)>;
IntArrayPtr ints(std::vector<int64_t> values) {
  return IntArrayPtr(aclCreateIntArray(values.data(), values.size()), &aclDestroyIntArray);
}

// The operators below check at phase 1 what CANN's docs require of them
// (Atlas A2/A3), with CANN's status codes.
TEST(convolution_checks_its_arguments_at_phase_1) {
  setDevice(0);
  const int64_t executors = stat("live_executors");
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  // aclnnConvolution: FLOAT, FLOAT16, BFLOAT16; one stride/padding/dilation value per spatial dim.
  DevTensor x(0, {1, 2, 5, 5}), w(0, {4, 2, 3, 3}), y(0, {1, 4, 3, 3});
  DevTensor x64(0, {1, 2, 5, 5}, ACL_DOUBLE), w64(0, {4, 2, 3, 3}, ACL_DOUBLE), y64(0, {1, 4, 3, 3}, ACL_DOUBLE);
  auto one2 = ints({1, 1}), zero2 = ints({0, 0}), one1 = ints({1});
  CHECK_EQ(aclnnConvolutionGetWorkspaceSize(x.get(), w.get(), nullptr, one2.get(), zero2.get(), one2.get(), false,
                                            zero2.get(), 1, y.get(), 0, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  CHECK_EQ(aclnnConvolutionGetWorkspaceSize(nullptr, w.get(), nullptr, one2.get(), zero2.get(), one2.get(), false,
                                            zero2.get(), 1, y.get(), 0, &ws, &e), ACLNN_ERR_PARAM_NULLPTR);
  CHECK_ERR_HAS("aclnnConvolution", "'input'");
  CHECK_EQ(aclnnConvolutionGetWorkspaceSize(x64.get(), w64.get(), nullptr, one2.get(), zero2.get(), one2.get(), false,
                                            zero2.get(), 1, y64.get(), 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnConvolution", "ACL_DOUBLE");
  CHECK_EQ(aclnnConvolutionGetWorkspaceSize(x.get(), w.get(), nullptr, one1.get(), zero2.get(), one2.get(), false,
                                            zero2.get(), 1, y.get(), 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("stride");
  CHECK_EQ(aclnnConvolutionGetWorkspaceSize(x.get(), w.get(), nullptr, one2.get(), zero2.get(), one2.get(), false,
                                            zero2.get(), 2, y.get(), 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("groups");
  CHECK_EQ(aclnnConvolutionGetWorkspaceSize(x.get(), w.get(), nullptr, one2.get(), ints({1, 0}).get(), one2.get(),
                                            false, zero2.get(), 1, y.get(), 0, &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("inferred");
  CHECK_EQ(stat("live_executors"), executors);
}

TEST(upsampling_checks_its_arguments_at_phase_1) {
  setDevice(0);
  const int64_t executors = stat("live_executors");
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  // Dtypes per operator, output [N, C, *outputSize], no negative scale, and (bilinear) no empty tensor.
  DevTensor img(0, {1, 1, 2, 2}), up(0, {1, 1, 4, 4}), img64(0, {1, 1, 2, 2}, ACL_DOUBLE),
      up64(0, {1, 1, 4, 4}, ACL_DOUBLE), none(0, {0, 1, 2, 2}, ACL_FLOAT, 1), noneUp(0, {0, 1, 4, 4}, ACL_FLOAT, 1);
  auto four = ints({4, 4});
  CHECK_EQ(aclnnUpsampleNearestExact2dGetWorkspaceSize(img64.get(), four.get(), 0, 0, up64.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnUpsampleNearestExact2d", "ACL_DOUBLE");
  CHECK_EQ(aclnnUpsampleNearest2dGetWorkspaceSize(img64.get(), four.get(), up64.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  CHECK_EQ(aclnnUpsampleNearest2dGetWorkspaceSize(img.get(), ints({4, 5}).get(), up.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("outputSize");
  CHECK_EQ(aclnnUpsampleBilinear2dGetWorkspaceSize(img.get(), four.get(), false, -2.0, 2.0, up.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("negative");
  CHECK_EQ(aclnnUpsampleBilinear2dGetWorkspaceSize(none.get(), four.get(), false, 0, 0, noneUp.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("empty");
  CHECK_EQ(aclnnUpsampleNearest2dV2GetWorkspaceSize(img.get(), nullptr, 2.0f, 2.0f, up.get(), &ws, &e),
           ACLNN_ERR_PARAM_NULLPTR);
  CHECK_ERR_HAS("'outputSize'");
  CHECK_EQ(stat("live_executors"), executors);
}

TEST(padding_checks_its_arguments_at_phase_1) {
  setDevice(0);
  const int64_t executors = stat("live_executors");
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  // Reflection and replication: each padding value >= 0 and smaller than the dim it pads;
  // replication takes no BOOL; the 2-d backward takes at most 7 for BFLOAT16.
  DevTensor row(0, {1, 1, 3}), padded(0, {1, 1, 6}), flags(0, {1, 1, 3}, ACL_BOOL), flagsOut(0, {1, 1, 5}, ACL_BOOL);
  row.write<float>({1, 2, 3});
  CHECK_EQ(aclnnReflectionPad1dGetWorkspaceSize(row.get(), ints({2, 1}).get(), padded.get(), &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnReflectionPad1d, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(padded.read<float>(), 3, 2, 1, 2, 3, 2);
  CHECK_EQ(aclnnReplicationPad1dGetWorkspaceSize(row.get(), ints({3, 0}).get(), padded.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("aclnnReplicationPad1d", "smaller than the dim");
  CHECK_EQ(aclnnReflectionPad1dGetWorkspaceSize(row.get(), ints({-1, 4}).get(), padded.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_EQ(aclnnReplicationPad1dGetWorkspaceSize(flags.get(), ints({1, 1}).get(), flagsOut.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("ACL_BOOL");
  CHECK_EQ(aclnnReflectionPad1dGetWorkspaceSize(flags.get(), ints({1, 1}).get(), flagsOut.get(), &ws, &e),
           ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  DevTensor plane(0, {1, 9, 9}, ACL_BF16), grad(0, {1, 17, 9}, ACL_BF16), gradIn(0, {1, 9, 9}, ACL_BF16);
  CHECK_EQ(aclnnReplicationPad2dBackwardGetWorkspaceSize(grad.get(), plane.get(), ints({0, 0, 8, 0}).get(),
                                                         gradIn.get(), &ws, &e), ACLNN_ERR_PARAM_INVALID);
  CHECK_ERR_HAS("at most 7");

  // aclnnConstantPadNd: an even pad, at most twice the dims; a negative value cuts.
  DevTensor cutOut(0, {1, 1, 1});
  ScalarPtr zero = floatScalar(0);
  CHECK_EQ(aclnnConstantPadNdGetWorkspaceSize(row.get(), ints({-1, -1}).get(), zero.get(), cutOut.get(), &ws, &e),
           ACLNN_SUCCESS);
  CHECK_EQ(launch(aclnnConstantPadNd, ws, e), ACLNN_SUCCESS);
  CHECK_VALUES(cutOut.read<float>(), 2);
  CHECK_EQ(aclnnConstantPadNdGetWorkspaceSize(row.get(), ints({1}).get(), zero.get(), padded.get(), &ws, &e),
           ACLNN_ERR_PARAM_INVALID);
  CHECK_EQ(aclnnConstantPadNdGetWorkspaceSize(row.get(), ints({1, 1}).get(), nullptr, padded.get(), &ws, &e),
           ACLNN_ERR_PARAM_NULLPTR);
  CHECK_EQ(stat("live_executors"), executors);
}

// A kernel that fails when it runs (here ATen's shape check) fails its
// stream: the next synchronization reports ACL_ERROR_RT_AICORE_EXCEPTION with
// the kernel's message (see kernel_failure_is_reported_by_the_next_synchronization).
TEST(kernel_errors_fail_the_stream) {
  setDevice(0);
  DevTensor self(0, {2, 3}), other(0, {4}), out(0, {2, 3});
  CHECK_EQ(add(self, other, 1.0f, out), ACL_ERROR_RT_AICORE_EXCEPTION);
  CHECK_ERR_HAS("aclrtSynchronizeStream", "aclnnAdd: kernel failed", "size");
  CHECK(lastError().find("Exception raised from") == std::string::npos);
}

TEST(faults_are_injected_and_leak_nothing) {
  setDevice(0);
  const int64_t executors = stat("live_executors"), allocations = stat("live_allocations", "0");
  {
    DevTensor self(0, {3}), other(0, {3}), out(0, {3});
    self.write<float>({1, 2, 3});
    other.write<float>({1, 1, 1});
    ScalarPtr one = floatScalar(1);
    uint64_t ws = 0;
    aclOpExecutor* e = nullptr;
    fsimInjectFault("aclnnAdd", 1, 1);
    CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), other.get(), one.get(), out.get(), &ws, &e), ACLNN_ERR_INNER);
    CHECK_EQ(lastError(), "aclnnAdd: injected fault at phase 1");
    CHECK(e == nullptr);
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);  // count 1: used up

    fsimInjectFault("aclnnAdd", 2, 2);
    out.write<float>({0, 0, 0});
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_INNER);
    CHECK_EQ(lastError(), "aclnnAdd: injected fault at phase 2");
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_ERR_INNER);
    CHECK_VALUES(out.read<float>(), 0, 0, 0);
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
    CHECK_VALUES(out.read<float>(), 2, 3, 4);

    fsimInjectFault("aclnnCast", 1, 5);
    fsimInjectFault("aclnnCast", 1, 0);  // count 0 clears
    CHECK_EQ(aclnnCastGetWorkspaceSize(self.get(), ACL_FLOAT, out.get(), &ws, &e), ACLNN_SUCCESS);
    CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
    fsimInjectFault("aclnnAdd", 2, 3);
    fsimClearFaults();
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);

    fsimInjectFault(nullptr, 1, 1);
    CHECK_ERR_HAS("fsimInjectFault");
    fsimInjectFault("aclnnAdd", 4, 1);
    CHECK_ERR_HAS("fsimInjectFault", "phase 4");
    CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
  }
  CHECK_EQ(stat("live_executors"), executors);
  CHECK_EQ(stat("live_allocations", "0"), allocations);
}

TEST(stats_json_lists_every_device) {
  std::string json = fsimStatsJson();
  for (const char* key : {"\"set_device_calls\": ", "\"rejected_launches\": ", "\"mismatched_launches\": ",
                          "\"op_launches\": {", "\"peer_copies\": ", "\"live_executors\": ",
                          "\"live_arguments\": "})
    CHECK(json.find(key) != std::string::npos);
  for (const char* map : {"\"launches\": {", "\"live_allocations\": {", "\"live_bytes\": {"}) {
    size_t begin = json.find(map), end = json.find('}', begin);
    CHECK(begin != std::string::npos);
    for (int d = 0; d < expectedDevices(); ++d) CHECK(json.find(cat("\"", d, "\": "), begin) < end);
    CHECK(json.find(cat("\"", expectedDevices(), "\": "), begin) > end);
  }
}

TEST(concurrent_launches_on_several_devices) {
  fsimResetStats();
  constexpr int kThreads = 4, kIterations = 40;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int d = 0; d < kThreads; ++d) {
    threads.emplace_back([d, &failures] {
      try {
        setDevice(d);
        for (int i = 0; i < kIterations; ++i) {
          DevTensor self(d, {64}), other(d, {64}), out(d, {64});
          self.write(std::vector<float>(64, static_cast<float>(i)));
          other.write(std::vector<float>(64, static_cast<float>(d)));
          CHECK_EQ(add(self, other, 1.0f, out), ACLNN_SUCCESS);
          CHECK_EQ(out.read<float>()[63], static_cast<float>(i + d));
        }
      } catch (const Failure& f) {
        failures[d] = f.what;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& f : failures) CHECK_EQ(f, std::string());
  for (int d = 0; d < kThreads; ++d) CHECK_EQ(stat("launches", std::to_string(d)), kIterations);
  CHECK_EQ(stat("op_launches", "aclnnAdd"), kThreads * kIterations);
}

}  // namespace
