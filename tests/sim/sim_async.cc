// The simulator's own tests: asynchronous streams: work runs after the call returns, in order, and every ordering is an explicit wait.
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

#include "sim_harness.h"

namespace {

using namespace fsim_test;

// Lazy streams (work runs only once something waits for it) for the rest of
// the case; then async again, and every held piece of work run.
struct LazyStreams {
  LazyStreams() { fsimSetStreamMode(FSIM_STREAMS_LAZY); }
  ~LazyStreams() {
    fsimSetStreamMode(FSIM_STREAMS_ASYNC);
    fsimDrainStreams();
  }
};

// A case with lazy streams on `device`, its counters reset.
struct LazyCase {
  explicit LazyCase(int device) {
    fsimResetStats();
    setDevice(device);
  }
  LazyStreams lazy;  // built before the body runs: the counters are reset in lazy mode
};

// Four int32s on `device`, each `value` (a memset writes bytes: 5 -> 0x05050505).
struct Int32s : DevTensor {
  Int32s(int device, int32_t value) : DevTensor(device, {4}, ACL_INT32) { write<int32_t>({value, value, value, value}); }
};

aclrtStream newStream() {
  aclrtStream s = nullptr;
  CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  return s;
}

aclrtEvent newEvent() {
  aclrtEvent e = nullptr;
  CHECK_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
  return e;
}

std::string hazardReport() { return fsimHazardReport(); }

// aclnnAdd queued on `stream`, without synchronizing: `workspace` must live
// until the kernel has run.
aclnnStatus addAsync(const aclTensor* self, const aclTensor* other, float alpha, aclTensor* out,
                     const DeviceMem& workspace, aclrtStream stream = nullptr) {
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  ScalarPtr a = floatScalar(alpha);
  CHECK_EQ(aclnnAddGetWorkspaceSize(self, other, a.get(), out, &ws, &e), ACLNN_SUCCESS);
  CHECK(ws <= workspace.bytes());
  return aclnnAdd(workspace.get(), ws, e, stream);
}

// Each launch of a repeatable executor runs on the addresses bound at that
// launch, whatever is rebound while it waits in the queue, also when the
// executor reuses the snapshots of its finished launches and when more
// launches are queued than it keeps snapshots for.
TEST(queued_launches_of_one_executor_keep_their_addresses) {
  LazyStreams lazy;
  setDevice(0);
  constexpr int kLaunches = 2100;  // more than an executor keeps snapshots for (a stream's 2048)
  DevTensor self(0, {2});
  self.write<float>({1, 2});
  std::vector<std::unique_ptr<DevTensor>> others, outs;
  for (int i = 0; i < kLaunches; ++i) {
    others.push_back(std::make_unique<DevTensor>(0, std::vector<int64_t>{2}));
    others.back()->write<float>({10.0f * i, 20.0f * i});
    outs.push_back(std::make_unique<DevTensor>(0, std::vector<int64_t>{2}));
    outs.back()->write<float>({-1, -1});
  }
  aclTensor* otherT = others[0]->view({2}, {1}, 0);
  aclTensor* outT = outs[0]->view({2}, {1}, 0);
  ScalarPtr one = floatScalar(1);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(self.get(), otherT, one.get(), outT, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  DeviceMem workspace(0, ws);
  auto launchAll = [&](int round) {
    for (int i = 0; i < kLaunches; ++i) {
      const int k = (i + round) % kLaunches;  // another pairing each round
      CHECK_EQ(aclSetInputTensorAddr(e, 1, otherT, others[k]->data()), ACLNN_SUCCESS);
      CHECK_EQ(aclSetOutputTensorAddr(e, 0, outT, outs[i]->data()), ACLNN_SUCCESS);
      CHECK_EQ(aclnnAdd(workspace.get(), ws, e, nullptr), ACLNN_SUCCESS);
    }
    CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    for (int i = 0; i < kLaunches; ++i) {
      const int k = (i + round) % kLaunches;
      CHECK_VALUES(outs[i]->read<float>(), 1 + 10.0f * k, 2 + 20.0f * k);
    }
  };
  launchAll(0);  // every launch queued before any runs
  launchAll(7);  // the finished launches' snapshots reused
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  aclDestroyTensor(otherT);
  aclDestroyTensor(outT);
  CHECK_EQ(stat("hazards"), 0);
}

// In the default (async) mode a stream's worker runs its work without
// anybody waiting for it.
TEST(async_streams_run_work_by_themselves) {
  CHECK_EQ(fsimGetStreamMode(), FSIM_STREAMS_ASYNC);
  setDevice(2);
  DeviceMem x(2, 16);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 0x11, 16, nullptr), ACL_SUCCESS);
  for (int i = 0; i < 1000 && queryStream(nullptr) != ACL_STREAM_STATUS_COMPLETE; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_COMPLETE);  // observed complete: ordered for the host
  std::vector<uint8_t> out(16, 0);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, x.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(str(out), str(std::vector<uint8_t>(16, 0x11)));
}

// Work queued on one stream runs in order, after the call has returned;
// aclrtStreamQuery says NOT_READY until it has run.
TEST(streams_run_queued_work_in_order) {
  LazyCase lazy(1);
  Int32s x(1, 0);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 1, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 2, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_NOT_READY);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_COMPLETE);
  CHECK_VALUES(x.read<int32_t>(), 0x02020202, 0x02020202, 0x02020202, 0x02020202);
  CHECK_EQ(stat("hazards"), 0);
}

// CANN's aclrtMemcpy copies at once, without waiting for any stream ("no
// implicit device or stream synchronization"): a host read of memory that
// queued work writes sees it as it was, and is reported as a hazard.
TEST(sync_copy_does_not_wait_for_queued_work) {
  LazyCase lazy(0);
  Int32s x(0, 7);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 0, 16, nullptr), ACL_SUCCESS);
  CHECK_VALUES(x.read<int32_t>(), 7, 7, 7, 7);
  CHECK_EQ(stat("hazards"), 1);
  const std::string report = hazardReport();
  CHECK(report.find("aclrtMemcpy on the host reads device memory") != std::string::npos);
  CHECK(report.find("that aclrtMemsetAsync on the default stream of device 0 writes") != std::string::npos);
  CHECK(report.find("read after write") != std::string::npos);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_VALUES(x.read<int32_t>(), 0, 0, 0, 0);
  CHECK_EQ(stat("hazards"), 1);  // the synchronized read is ordered
  fsimResetStats();
  CHECK_EQ(stat("hazards"), 0);
  CHECK_EQ(hazardReport(), "");
}

// A launch queues the kernel with its arguments of that moment: rebinding a
// repeatable executor, destroying it and its aclTensor objects after the
// launch change nothing for the queued kernel.
TEST(launch_queues_the_kernel_with_the_arguments_of_that_moment) {
  LazyCase lazy(0);
  DevTensor self(0, {3}), other(0, {3}), other2(0, {3}), out(0, {3}), out2(0, {3});
  self.write<float>({1, 2, 3});
  other.write<float>({10, 10, 10});
  other2.write<float>({100, 100, 100});
  out.write<float>({0, 0, 0});
  out2.write<float>({0, 0, 0});
  aclTensor* selfT = self.view({3}, {1}, 0);
  aclTensor* otherT = other.view({3}, {1}, 0);
  aclTensor* outT = out.view({3}, {1}, 0);
  ScalarPtr one = floatScalar(1);
  DeviceMem workspace(0, 64);
  uint64_t ws = 0;
  aclOpExecutor* e = nullptr;
  CHECK_EQ(aclnnAddGetWorkspaceSize(selfT, otherT, one.get(), outT, &ws, &e), ACLNN_SUCCESS);
  CHECK_EQ(aclSetAclOpExecutorRepeatable(e), ACLNN_SUCCESS);
  CHECK_EQ(aclnnAdd(workspace.get(), ws, e, nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclSetInputTensorAddr(e, 1, otherT, other2.data()), ACLNN_SUCCESS);
  CHECK_EQ(aclSetOutputTensorAddr(e, 0, outT, out2.data()), ACLNN_SUCCESS);
  CHECK_EQ(aclnnAdd(workspace.get(), ws, e, nullptr), ACLNN_SUCCESS);
  CHECK_EQ(aclDestroyAclOpExecutor(e), ACLNN_SUCCESS);
  for (aclTensor* t : {selfT, otherT, outT}) aclDestroyTensor(t);
  CHECK_EQ(stat("launches", "0"), 2);  // counted when queued
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_NOT_READY);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_VALUES(out.read<float>(), 11, 12, 13);
  CHECK_VALUES(out2.read<float>(), 101, 102, 103);
  CHECK_EQ(stat("hazards"), 0);
}

// A stream that waits for an event does not run past the wait before the
// event's record has completed, on whatever device it was recorded; the
// same copy without the wait reads the memory before the write it should
// have waited for, and is a hazard.
TEST(event_wait_orders_streams_across_devices) {
  LazyCase lazy(0);
  Int32s x(0, 0);
  aclrtEvent e = newEvent();
  setDevice(1);
  Int32s y(1, 0);
  CHECK_EQ(aclrtDeviceEnablePeerAccess(0, 0), ACL_SUCCESS);
  aclrtStream s1 = newStream();

  setDevice(0);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 5, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, nullptr), ACL_SUCCESS);
  setDevice(1);
  CHECK_EQ(aclrtStreamWaitEvent(s1, e), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(y.data(), 16, x.data(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE, s1), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(s1), ACL_SUCCESS);  // runs device 0's memset first
  CHECK_VALUES(y.read<int32_t>(), 0x05050505, 0x05050505, 0x05050505, 0x05050505);
  CHECK_EQ(stat("hazards"), 0);

  // The control: no wait.
  setDevice(0);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 9, 16, nullptr), ACL_SUCCESS);
  setDevice(1);
  CHECK_EQ(aclrtMemcpyAsync(y.data(), 16, x.data(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE, s1), ACL_SUCCESS);
  CHECK_EQ(stat("hazards"), 1);
  CHECK(hazardReport().find("aclrtMemcpyAsync on stream") != std::string::npos);
  CHECK_EQ(aclrtSynchronizeStream(s1), ACL_SUCCESS);
  CHECK_VALUES(y.read<int32_t>(), 0x05050505, 0x05050505, 0x05050505, 0x05050505);  // stale
  CHECK_EQ(aclrtDestroyStream(s1), ACL_SUCCESS);
  setDevice(0);
  CHECK_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

// Two streams writing one allocation with nothing ordering them is a hazard
// whatever the workers' timing; an event between them removes it.
TEST(hazards_between_streams_do_not_depend_on_timing) {
  fsimResetStats();
  setDevice(0);
  aclrtStream a = newStream(), b = newStream();
  DeviceMem x(0, 16);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 1, 16, a), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(a), ACL_SUCCESS);  // long done, but b never learned it
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 2, 16, b), ACL_SUCCESS);
  CHECK_EQ(stat("hazards"), 0);  // the host saw a's memset complete before queuing b's
  CHECK_EQ(aclrtSynchronizeStream(b), ACL_SUCCESS);
  aclrtEvent e = newEvent();
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 1, 16, a), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 2, 16, b), ACL_SUCCESS);
  CHECK_EQ(stat("hazards"), 1);
  CHECK(hazardReport().find("write after write") != std::string::npos);
  CHECK_EQ(aclrtRecordEvent(e, b), ACL_SUCCESS);
  CHECK_EQ(aclrtStreamWaitEvent(a, e), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 3, 16, a), ACL_SUCCESS);
  CHECK_EQ(stat("hazards"), 1);
  CHECK_EQ(aclrtSynchronizeStream(a), ACL_SUCCESS);
  std::vector<uint8_t> out(16, 0);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, x.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(str(out), str(std::vector<uint8_t>(16, 3)));
  CHECK_EQ(stat("hazards"), 1);
  CHECK_EQ(aclrtSynchronizeStream(b), ACL_SUCCESS);
  for (aclrtStream s : {a, b}) CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

// aclrtSynchronizeDevice waits for every stream of the current device.
TEST(synchronize_device_waits_for_every_stream) {
  LazyCase lazy(2);
  aclrtStream a = newStream(), b = newStream();
  DeviceMem x(2, 16), y(2, 16), z(2, 16);
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 1, 16, a), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(y.get(), 16, 2, 16, b), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(z.get(), 16, 3, 16, nullptr), ACL_SUCCESS);
  for (aclrtStream s : {a, b, static_cast<aclrtStream>(nullptr)}) CHECK_EQ(queryStream(s), ACL_STREAM_STATUS_NOT_READY);
  CHECK_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  for (aclrtStream s : {a, b, static_cast<aclrtStream>(nullptr)}) CHECK_EQ(queryStream(s), ACL_STREAM_STATUS_COMPLETE);
  uint8_t v[3] = {0, 0, 0};
  CHECK_EQ(aclrtMemcpy(&v[0], 1, x.get(), 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(&v[1], 1, y.get(), 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpy(&v[2], 1, z.get(), 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(int(v[0]) * 100 + int(v[1]) * 10 + int(v[2]), 123);
  CHECK_EQ(stat("hazards"), 0);
  for (aclrtStream s : {a, b}) CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

// An event completes, with its timestamp, when its stream gets to the
// record: until then it is NOT_READY and has no time (107006).
// aclrtSynchronizeEvent waits for that point only.
TEST(record_completes_when_the_stream_gets_there) {
  LazyCase lazy(0);
  DeviceMem x(0, 16), y(0, 16);
  aclrtEvent e = newEvent();
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 1, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(y.get(), 16, 2, 16, nullptr), ACL_SUCCESS);
  aclrtEventStatus status = ACL_EVENT_STATUS_RESERVED;
  CHECK_EQ(aclrtQueryEvent(e, &status), ACL_SUCCESS);
  CHECK_EQ(status, ACL_EVENT_STATUS_NOT_READY);
  float ms = -1;
  CHECK_EQ(aclrtEventElapsedTime(&ms, e, e), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
  CHECK_ERR_HAS("aclrtEventElapsedTime", "has not completed yet");
  CHECK_EQ(aclrtSynchronizeEvent(e), ACL_SUCCESS);
  CHECK_EQ(aclrtQueryEvent(e, &status), ACL_SUCCESS);
  CHECK_EQ(status, ACL_EVENT_STATUS_COMPLETE);
  CHECK_EQ(aclrtEventElapsedTime(&ms, e, e), ACL_SUCCESS);
  CHECK_EQ(ms, 0.0f);
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_NOT_READY);  // the second memset is still held
  uint8_t v = 0;
  CHECK_EQ(aclrtMemcpy(&v, 1, x.get(), 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(int(v), 1);
  CHECK_EQ(stat("hazards"), 0);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

// A wait waits for the event's record at the time of the call: recording the
// event again later does not move it.
TEST(stream_wait_captures_the_record_of_that_moment) {
  LazyCase lazy(0);
  aclrtStream a = newStream(), b = newStream();
  DeviceMem x(0, 16), y(0, 16), z(0, 16);
  aclrtEvent e = newEvent();
  CHECK_EQ(aclrtMemsetAsync(x.get(), 16, 1, 16, a), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, a), ACL_SUCCESS);
  CHECK_EQ(aclrtStreamWaitEvent(b, e), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(z.get(), 16, 2, 16, a), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, a), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(y.get(), 16, x.get(), 16, ACL_MEMCPY_DEVICE_TO_DEVICE, b), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(b), ACL_SUCCESS);
  CHECK_EQ(queryStream(a), ACL_STREAM_STATUS_NOT_READY);  // z's memset and the second record: not needed
  uint8_t v = 0;
  CHECK_EQ(aclrtMemcpy(&v, 1, y.get(), 1, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(int(v), 1);
  CHECK_EQ(stat("hazards"), 0);
  CHECK_EQ(aclrtSynchronizeStream(a), ACL_SUCCESS);
  for (aclrtStream s : {a, b}) CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

// A kernel that fails when it runs does not fail its launch: the next
// synchronization of its stream (or device) reports
// ACL_ERROR_RT_AICORE_EXCEPTION with the kernel's message, once; the work
// queued after it still runs (CANN's default continue-on-failure mode). An
// event synchronization leaves the error to the stream.
TEST(kernel_failure_is_reported_by_the_next_synchronization) {
  fsimResetStats();
  setDevice(0);
  DevTensor self(0, {3}), other(0, {3}), out(0, {3}), out2(0, {3});
  self.write<float>({1, 2, 3});
  other.write<float>({1, 1, 1});
  DeviceMem workspace(0, 64);
  fsimInjectFault("aclnnAdd", 3, 1);
  CHECK_EQ(addAsync(self.get(), other.get(), 1, out.get(), workspace), ACLNN_SUCCESS);
  CHECK_EQ(addAsync(self.get(), other.get(), 1, out2.get(), workspace), ACLNN_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_ERROR_RT_AICORE_EXCEPTION);
  CHECK_ERR_HAS("aclrtSynchronizeStream", "aclnnAdd: injected fault at phase 3", "ACL_ERROR_RT_AICORE_EXCEPTION",
                "the default stream of device 0");
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);  // reported once
  CHECK_VALUES(out2.read<float>(), 2, 3, 4);
  CHECK_EQ(stat("failed_tasks"), 1);
  CHECK_EQ(stat("launches", "0"), 2);

  aclrtStream s = newStream();
  aclrtEvent e = newEvent();
  fsimInjectFault("aclnnAdd", 3, 1);
  CHECK_EQ(addAsync(self.get(), other.get(), 1, out.get(), workspace, s), ACLNN_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, s), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeEvent(e), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeDevice(), ACL_ERROR_RT_AICORE_EXCEPTION);
  CHECK_ERR_HAS("aclrtSynchronizeDevice", "injected fault at phase 3");
  CHECK_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  // An ATen error inside the kernel, the same way.
  DevTensor wrong(0, {2});
  CHECK_EQ(addAsync(self.get(), wrong.get(), 1, out.get(), workspace, s), ACLNN_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(s), ACL_ERROR_RT_AICORE_EXCEPTION);
  CHECK_ERR_HAS("aclnnAdd: kernel failed");
  CHECK_EQ(stat("failed_tasks"), 3);
  CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

// An async copy with a pageable host side synchronizes the stream and copies
// at once (CANN's runtime does so), reporting the stream's pending error; with
// pinned memory it is queued like any work.
TEST(async_copy_of_pageable_memory_synchronizes_the_stream) {
  LazyCase lazy(1);
  Int32s x(1, 0);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 6, 16, nullptr), ACL_SUCCESS);
  std::vector<int32_t> out(4, 0);
  CHECK_EQ(aclrtMemcpyAsync(out.data(), 16, x.data(), 16, ACL_MEMCPY_DEVICE_TO_HOST, nullptr), ACL_SUCCESS);
  CHECK_VALUES(out, 0x06060606, 0x06060606, 0x06060606, 0x06060606);
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_COMPLETE);

  void* pinned = nullptr;
  CHECK_EQ(aclrtMallocHost(&pinned, 16), ACL_SUCCESS);
  std::memset(pinned, 0, 16);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 8, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(pinned, 16, x.data(), 16, ACL_MEMCPY_DEVICE_TO_HOST, nullptr), ACL_SUCCESS);
  CHECK_EQ(static_cast<uint8_t*>(pinned)[0], 0);  // queued
  CHECK_EQ(queryStream(nullptr), ACL_STREAM_STATUS_NOT_READY);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_EQ(static_cast<uint8_t*>(pinned)[0], 8);
  CHECK_EQ(stat("hazards"), 0);

  DevTensor self(1, {4}), outT(1, {4});
  DeviceMem workspace(1, 64);
  fsimInjectFault("aclnnAdd", 3, 1);
  CHECK_EQ(addAsync(self.get(), self.get(), 1, outT.get(), workspace), ACLNN_SUCCESS);
  CHECK_EQ(aclrtMemcpyAsync(out.data(), 16, x.data(), 16, ACL_MEMCPY_DEVICE_TO_HOST, nullptr),
           ACL_ERROR_RT_AICORE_EXCEPTION);
  CHECK_ERR_HAS("aclrtMemcpyAsync", "injected fault at phase 3");
  CHECK_EQ(aclrtFreeHost(pinned), ACL_SUCCESS);
}

// Freeing memory that queued work still uses succeeds at once, as CANN's
// aclrtFree does (no implicit synchronization), and is a hazard; the memory
// stays mapped until the work has run, so the simulator itself never touches
// unmapped memory.
TEST(free_of_memory_in_use_is_a_hazard_but_safe) {
  LazyCase lazy(0);
  const int64_t live = stat("live_allocations", "0");
  auto* self = new DevTensor(0, {3});
  DevTensor other(0, {3}), out(0, {3});
  self->write<float>({1, 2, 3});
  other.write<float>({1, 1, 1});
  DeviceMem workspace(0, 64);
  CHECK_EQ(addAsync(self->get(), other.get(), 1, out.get(), workspace), ACLNN_SUCCESS);
  delete self;  // destroys its aclTensor and frees its memory: the queued kernel still reads it
  CHECK_EQ(stat("live_allocations", "0"), live + 3);
  CHECK_EQ(stat("hazards"), 1);
  CHECK(hazardReport().find("aclrtFree on the host writes device memory") != std::string::npos);
  CHECK(hazardReport().find("that aclnnAdd on the default stream of device 0 reads") != std::string::npos);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_VALUES(out.read<float>(), 2, 3, 4);
  void* pinned = nullptr;
  CHECK_EQ(aclrtMallocHost(&pinned, 16), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(pinned, 16, 4, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtFreeHost(pinned), ACL_SUCCESS);
  CHECK_EQ(stat("hazards"), 2);
  CHECK_EQ(stat("live_pinned_allocations"), 0);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtFreeHost(pinned), ACL_ERROR_RT_PARAM_INVALID);  // freed already
}

// Destroying a stream, and the reset that tears a device down, wait for the
// work queued on it first (as CANN's documentation says).
TEST(destroy_and_reset_wait_for_queued_work) {
  LazyCase lazy(3);
  Int32s x(3, 0);
  aclrtStream s = newStream();
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 3, 16, s), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  CHECK_VALUES(x.read<int32_t>(), 0x03030303, 0x03030303, 0x03030303, 0x03030303);
  CHECK_EQ(aclrtMemsetAsync(x.data(), 16, 4, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtResetDeviceForce(3), ACL_SUCCESS);
  setDevice(3);
  CHECK_VALUES(x.read<int32_t>(), 0x04040404, 0x04040404, 0x04040404, 0x04040404);
  CHECK_EQ(stat("hazards"), 0);
}

// aclrtMemsetAsync: count 0 succeeds first; null 100000; count beyond
// maxCount 107000; a stream of another device 107003, a stale one 107017; no
// device 107002; pageable memory and overruns 107000 (the driver decides).
TEST(memset_async_checks_and_queues) {
  setDevice(2);
  aclrtStream s2 = newStream();
  setDevice(1);
  DeviceMem a(1, 16);
  std::vector<uint8_t> pageable(16, 0);
  CHECK_EQ(aclrtMemsetAsync(nullptr, 0, 0, 0, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtMemsetAsync(nullptr, 16, 0, 16, nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtMemsetAsync", "nullptr");
  CHECK_EQ(aclrtMemsetAsync(a.get(), 8, 0, 16, nullptr), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemsetAsync", "count 16", "maxCount 8");
  CHECK_EQ(aclrtMemsetAsync(a.get(), 16, 0, 16, s2), ACL_ERROR_RT_STREAM_CONTEXT);
  CHECK_ERR_HAS("aclrtMemsetAsync", "belongs to device 2", "current device is 1");
  CHECK_EQ(aclrtMemsetAsync(pageable.data(), 16, 0, 16, nullptr), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemsetAsync", "pageable host memory");
  CHECK_EQ(aclrtMemsetAsync(static_cast<char*>(a.get()) + 8, 16, 0, 16, nullptr), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtMemsetAsync", "overrun");
  aclError rc = ACL_SUCCESS;
  onFreshThread([&] { rc = aclrtMemsetAsync(a.get(), 16, 0, 16, nullptr); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK_EQ(aclrtMemsetAsync(a.get(), 16, 0x3C, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  std::vector<uint8_t> out(16, 0);
  CHECK_EQ(aclrtMemcpy(out.data(), 16, a.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  CHECK_EQ(str(out), str(std::vector<uint8_t>(16, 0x3C)));
  setDevice(2);
  CHECK_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
  setDevice(1);
  CHECK_EQ(aclrtMemsetAsync(a.get(), 16, 0, 16, s2), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtMemsetAsync", "not a live stream");
}

// aclrtStreamQuery: status null 100000; a stale stream 107017; no device
// 107002; a stream of any device (CANN does not compare devices here).
// A stream's queue holds CANN's submission-queue depth (2048 positions):
// queueing one more waits for the worker to make room, here by running the
// oldest position (lazy mode runs nothing unless something waits).
TEST(a_full_stream_queue_makes_the_host_wait_for_room) {
  LazyStreams lazy;
  setDevice(3);
  DeviceMem first(3, 16), rest(3, 16);
  CHECK_EQ(aclrtMemsetAsync(first.get(), 16, 0x11, 16, nullptr), ACL_SUCCESS);
  for (int i = 1; i < 2048; ++i) CHECK_EQ(aclrtMemsetAsync(rest.get(), 16, i & 0xff, 16, nullptr), ACL_SUCCESS);
  auto firstNow = [&] {
    std::vector<uint8_t> out(16, 0);
    CHECK_EQ(aclrtMemcpy(out.data(), 16, first.get(), 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    return out[0];
  };
  CHECK(firstNow() != 0x11);  // 2048 positions queued, none run
  CHECK_EQ(aclrtMemsetAsync(rest.get(), 16, 0, 16, nullptr), ACL_SUCCESS);
  CHECK_EQ(firstNow(), 0x11);  // the 2049th made room: the first ran
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
}

TEST(stream_query_checks_arguments) {
  setDevice(2);
  aclrtStream s2 = newStream();
  setDevice(0);
  CHECK_EQ(aclrtStreamQuery(nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtStreamQuery", "status is nullptr");
  CHECK_EQ(queryStream(s2), ACL_STREAM_STATUS_COMPLETE);
  aclError rc = ACL_SUCCESS;
  aclrtStreamStatus status = ACL_STREAM_STATUS_RESERVED;
  onFreshThread([&] { rc = aclrtStreamQuery(nullptr, &status); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  setDevice(2);
  CHECK_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
  CHECK_EQ(aclrtStreamQuery(s2, &status), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtStreamQuery", "not a live stream");
}

}  // namespace
