// The simulator's own tests: streams and events: which device they belong to, handle checks, synchronization, event flags and timing.
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

TEST(stream_belongs_to_creating_device) {
  setDevice(2);
  aclrtStream s = nullptr;
  CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  CHECK_EQ(fsimStreamDevice(s), 2);
  setDevice(0);
  CHECK_EQ(fsimStreamDevice(s), 2);
  CHECK_EQ(fsimStreamDevice(nullptr), 0);  // the current device's default stream
  CHECK_EQ(aclrtCreateStream(nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtCreateStream", "nullptr");
  aclError rc = ACL_SUCCESS;
  std::string message;
  onFreshThread([&] {
    rc = aclrtCreateStream(&s);
    message = lastError();
  });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK(message.find("aclrtCreateStream") != std::string::npos);
  setDevice(2);
  CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

// Only a stream of the current device can be destroyed; a destroyed handle
// is stale (107017).
TEST(destroy_stream_checks_handle_and_device) {
  setDevice(2);
  aclrtStream s = nullptr;
  CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtDestroyStream", "default stream");
  setDevice(0);
  CHECK_EQ(aclrtDestroyStream(s), ACL_ERROR_RT_STREAM_CONTEXT);
  CHECK_ERR_HAS("aclrtDestroyStream", "belongs to device 2", "current device is 0");
  aclError rc = ACL_SUCCESS;
  onFreshThread([&] { rc = aclrtDestroyStream(s); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK_EQ(fsimStreamDevice(s), 2);  // still alive
  setDevice(2);
  CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(s), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtDestroyStream", "not a live stream");
  CHECK_EQ(fsimStreamDevice(s), -1);
  int notAStream = 0;
  CHECK_EQ(aclrtDestroyStream(&notAStream), ACL_ERROR_RT_INVALID_HANDLE);
}

// Synchronizing works on any device's stream (CANN switches devices for the
// wait), but the calling thread needs a current device.
TEST(synchronize_stream_of_any_device) {
  setDevice(2);
  aclrtStream s = nullptr;
  CHECK_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
  setDevice(0);
  CHECK_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  aclError rcDefault = ACL_SUCCESS, rcExplicit = ACL_SUCCESS;
  std::string message;
  onFreshThread([&] {
    rcDefault = aclrtSynchronizeStream(nullptr);
    message = lastError();
    rcExplicit = aclrtSynchronizeStream(s);
  });
  CHECK_EQ(rcDefault, ACL_ERROR_RT_CONTEXT_NULL);
  CHECK(message.find("aclrtSynchronizeStream") != std::string::npos);
  CHECK_EQ(rcExplicit, ACL_ERROR_RT_CONTEXT_NULL);
  setDevice(2);
  CHECK_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(s), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtSynchronizeStream", "not a live stream");
}

// An event is recorded on a stream of the current device (107003 otherwise);
// the event's own device is not compared with the stream's. Any stream of the
// current device may wait for an event of any device.
TEST(events_validate_handles_and_devices) {
  setDevice(1);
  aclrtStream s1 = nullptr, s2 = nullptr;
  aclrtEvent e = nullptr;
  CHECK_EQ(aclrtCreateStream(&s1), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, s1), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, nullptr), ACL_SUCCESS);
  setDevice(2);
  CHECK_EQ(aclrtCreateStream(&s2), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, s1), ACL_ERROR_RT_STREAM_CONTEXT);
  CHECK_ERR_HAS("aclrtRecordEvent", "belongs to device 1", "current device is 2");
  CHECK_EQ(aclrtStreamWaitEvent(s1, e), ACL_ERROR_RT_STREAM_CONTEXT);
  CHECK_ERR_HAS("aclrtStreamWaitEvent", "belongs to device 1");
  CHECK_EQ(aclrtStreamWaitEvent(s2, e), ACL_SUCCESS);  // waiting crosses devices
  CHECK_EQ(aclrtStreamWaitEvent(nullptr, e), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(e, s2), ACL_SUCCESS);  // an event of device 1 on device 2's stream
  CHECK_EQ(aclrtRecordEvent(nullptr, s2), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtRecordEvent", "nullptr");
  CHECK_EQ(aclrtStreamWaitEvent(s2, nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtCreateEvent(nullptr), ACL_ERROR_INVALID_PARAM);
  aclError rc = ACL_SUCCESS;
  onFreshThread([&] { rc = aclrtRecordEvent(e, nullptr); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
  aclrtEvent lost = nullptr;
  onFreshThread([&] { rc = aclrtCreateEvent(&lost); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);

  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtDestroyEvent", "not a live event");
  CHECK_EQ(aclrtDestroyEvent(nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtSynchronizeEvent(e), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtSynchronizeEvent", "not a live event");
  CHECK_EQ(aclrtStreamWaitEvent(s2, e), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_EQ(aclrtRecordEvent(e, s2), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtRecordEvent", "not a live event");
  aclrtEvent fresh = nullptr;
  CHECK_EQ(aclrtCreateEvent(&fresh), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(fresh, s2), ACL_ERROR_RT_INVALID_HANDLE);  // a stale stream
  CHECK_ERR_HAS("aclrtRecordEvent", "not a live stream");
  CHECK_EQ(aclrtStreamWaitEvent(s2, fresh), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_EQ(aclrtDestroyEvent(fresh), ACL_SUCCESS);
  setDevice(1);
  CHECK_EQ(aclrtDestroyStream(s1), ACL_SUCCESS);
}

TEST(create_event_with_flag_checks_flags) {
  setDevice(0);
  aclrtEvent e = nullptr;
  for (uint32_t bad : {0u, ACL_EVENT_IPC, 0x80u, 0x41u, ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_SYNC,
                       ACL_EVENT_EXTERNAL | ACL_EVENT_TIME_LINE}) {
    CHECK_EQ(aclrtCreateEventWithFlag(&e, bad), ACL_ERROR_RT_PARAM_INVALID);
    CHECK_ERR_HAS("aclrtCreateEventWithFlag", cat("flag ", bad));
  }
  for (uint32_t good : {ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE,
                        ACL_EVENT_CAPTURE_STREAM_PROGRESS, 0x4u, 0xFu, ACL_EVENT_DEVICE_USE_ONLY,
                        ACL_EVENT_EXTERNAL}) {
    CHECK_EQ(aclrtCreateEventWithFlag(&e, good), ACL_SUCCESS);
    CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
  }
  CHECK_EQ(aclrtCreateEventWithFlag(nullptr, ACL_EVENT_SYNC), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtCreateEventWithFlag", "nullptr");
  aclError rc = ACL_SUCCESS;
  onFreshThread([&] { rc = aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC); });
  CHECK_EQ(rc, ACL_ERROR_RT_CONTEXT_NULL);
}

// Which events a stream can wait for: a recorded one; a never-recorded one
// only with ACL_EVENT_SYNC (aclrtCreateEvent's events have none: 107000);
// never a timeline-only one (207000) or a device-only one (107000).
TEST(stream_wait_event_needs_a_waitable_recorded_event) {
  setDevice(0);
  aclrtEvent plain = nullptr, sync = nullptr, timeline = nullptr, deviceOnly = nullptr;
  CHECK_EQ(aclrtCreateEvent(&plain), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEventWithFlag(&sync, ACL_EVENT_SYNC), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEventWithFlag(&timeline, ACL_EVENT_TIME_LINE), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEventWithFlag(&deviceOnly, ACL_EVENT_DEVICE_USE_ONLY), ACL_SUCCESS);
  CHECK_EQ(aclrtStreamWaitEvent(nullptr, plain), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtStreamWaitEvent", "never been recorded");
  CHECK_EQ(aclrtStreamWaitEvent(nullptr, sync), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(plain, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtStreamWaitEvent(nullptr, plain), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(timeline, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtStreamWaitEvent(nullptr, timeline), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  CHECK_ERR_HAS("aclrtStreamWaitEvent", "cannot be waited for");
  CHECK_EQ(aclrtRecordEvent(deviceOnly, nullptr), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtRecordEvent", "ACL_EVENT_DEVICE_USE_ONLY");
  CHECK_EQ(aclrtStreamWaitEvent(nullptr, deviceOnly), ACL_ERROR_RT_PARAM_INVALID);
  CHECK_ERR_HAS("aclrtStreamWaitEvent", "ACL_EVENT_DEVICE_USE_ONLY");
  for (aclrtEvent e : {plain, sync, timeline, deviceOnly}) CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

// A never-recorded event is complete; a recorded one once its stream has got
// there (see record_completes_when_the_stream_gets_there for NOT_READY).
TEST(query_event_reports_completion) {
  setDevice(1);
  aclrtEvent e = nullptr, external = nullptr;
  CHECK_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
  aclrtEventStatus status = ACL_EVENT_STATUS_RESERVED;
  CHECK_EQ(aclrtQueryEvent(e, &status), ACL_SUCCESS);
  CHECK_EQ(status, ACL_EVENT_STATUS_COMPLETE);
  CHECK_EQ(aclrtRecordEvent(e, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeEvent(e), ACL_SUCCESS);
  status = ACL_EVENT_STATUS_RESERVED;
  CHECK_EQ(aclrtQueryEvent(e, &status), ACL_SUCCESS);
  CHECK_EQ(status, ACL_EVENT_STATUS_COMPLETE);
  aclError rc = ACL_ERROR_RT_FAILURE;
  onFreshThread([&] { rc = aclrtQueryEvent(e, &status); });  // needs no current device
  CHECK_EQ(rc, ACL_SUCCESS);
  CHECK_EQ(aclrtQueryEvent(e, nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtQueryEvent", "status is nullptr");
  CHECK_EQ(aclrtQueryEvent(nullptr, &status), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtCreateEventWithFlag(&external, ACL_EVENT_EXTERNAL), ACL_SUCCESS);
  CHECK_EQ(aclrtQueryEvent(external, &status), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  CHECK_ERR_HAS("aclrtQueryEvent", "ACL_EVENT_EXTERNAL");
  CHECK_EQ(aclrtDestroyEvent(external), ACL_SUCCESS);
  CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
  CHECK_EQ(aclrtQueryEvent(e, &status), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_ERR_HAS("aclrtQueryEvent", "not a live event");
}

// Milliseconds between the completion of two recorded events; an event that
// was never recorded has no time (507000).
TEST(event_elapsed_time_in_milliseconds) {
  setDevice(0);
  aclrtEvent start = nullptr, end = nullptr;
  CHECK_EQ(aclrtCreateEvent(&start), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEvent(&end), ACL_SUCCESS);
  float ms = -1;
  CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_INTERNAL_ERROR);
  CHECK_ERR_HAS("aclrtEventElapsedTime", "startEvent", "never been recorded");
  CHECK_EQ(aclrtRecordEvent(start, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_INTERNAL_ERROR);
  CHECK_ERR_HAS("aclrtEventElapsedTime", "endEvent", "never been recorded");
  // A record's timestamp is taken when the stream's worker reaches it. Waiting
  // for `start` before sleeping makes the 30 ms a lower bound whatever the
  // workers' scheduling (no upper bound: a loaded machine may stall).
  CHECK_EQ(aclrtSynchronizeEvent(start), ACL_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  CHECK_EQ(aclrtRecordEvent(end, nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_SUCCESS);
  CHECK(ms >= 29.0f);
  float back = 1;
  CHECK_EQ(aclrtEventElapsedTime(&back, end, start), ACL_SUCCESS);  // no reversal check, as in CANN
  CHECK(back <= -29.0f);
  CHECK_EQ(aclrtEventElapsedTime(nullptr, start, end), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtEventElapsedTime", "ms is nullptr");
  CHECK_EQ(aclrtEventElapsedTime(&ms, nullptr, end), ACL_ERROR_INVALID_PARAM);
  CHECK_EQ(aclrtDestroyEvent(end), ACL_SUCCESS);
  CHECK_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_ERROR_RT_INVALID_HANDLE);
  CHECK_EQ(aclrtDestroyEvent(start), ACL_SUCCESS);
}

// An event can be synchronized from any thread, with any current device or
// none; a never-recorded event returns at once.
TEST(synchronize_event_needs_no_current_device) {
  setDevice(1);
  aclrtEvent recorded = nullptr, unrecorded = nullptr, external = nullptr;
  CHECK_EQ(aclrtCreateEvent(&recorded), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEvent(&unrecorded), ACL_SUCCESS);
  CHECK_EQ(aclrtCreateEventWithFlag(&external, ACL_EVENT_EXTERNAL), ACL_SUCCESS);
  CHECK_EQ(aclrtRecordEvent(recorded, nullptr), ACL_SUCCESS);
  aclError rc[2] = {ACL_ERROR_RT_FAILURE, ACL_ERROR_RT_FAILURE};
  onFreshThread([&] {
    rc[0] = aclrtSynchronizeEvent(recorded);
    rc[1] = aclrtSynchronizeEvent(unrecorded);
  });
  CHECK_EQ(rc[0], ACL_SUCCESS);
  CHECK_EQ(rc[1], ACL_SUCCESS);
  setDevice(3);
  CHECK_EQ(aclrtSynchronizeEvent(recorded), ACL_SUCCESS);
  CHECK_EQ(aclrtSynchronizeEvent(nullptr), ACL_ERROR_INVALID_PARAM);
  CHECK_ERR_HAS("aclrtSynchronizeEvent", "nullptr");
  CHECK_EQ(aclrtSynchronizeEvent(external), ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
  CHECK_ERR_HAS("aclrtSynchronizeEvent", "ACL_EVENT_EXTERNAL");
  for (aclrtEvent e : {recorded, unrecorded, external}) CHECK_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
}

}  // namespace
