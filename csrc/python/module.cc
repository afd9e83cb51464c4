// torch_fl._C: the Python face of the backend. It includes torch's pybind
// glue (torch/csrc/utils/pybind.h), not torch/extension.h: that one also
// pulls the whole C++ frontend (torch/all.h), which this module never uses.
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>
#include <pybind11/chrono.h>
#include <pybind11/stl.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <mutex>

#include "aten/fallback.h"
#include "distributed/process_group_hccl.h"
#include "runtime/acl_check.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/executor_cache.h"
#include "runtime/host_allocator.h"
#include "runtime/launch.h"
#include "runtime/opapi.h"
#include "runtime/phases.h"
#include "runtime/profiler.h"
#include "runtime/stream.h"

namespace py = pybind11;

namespace {

c10::Stream stream_of(int64_t stream_id, c10::DeviceIndex device) {
  flagos::check_device_index(device);
  TORCH_CHECK(stream_id >= 0 && stream_id < flagos::kMaxStreamsPerDevice, "flagos: unknown stream id ", stream_id);
  return c10::Stream(c10::Stream::UNSAFE, flagos::flagos_device(device), stream_id);
}

// The waits of torch_fl._C._set_stream_waits_enabled, by name.
flagos::StreamWait wait_kind(const std::string& name) {
  for (int k = 0; k < flagos::kStreamWaitKinds; ++k) {
    const auto kind = static_cast<flagos::StreamWait>(k);
    if (name == flagos::stream_wait_name(kind)) return kind;
  }
  TORCH_CHECK_VALUE(false, "flagos: unknown stream wait '", name, "'");
}

// aclrtGetDeviceInfo's answer, or nullopt when the runtime has none.
std::optional<int64_t> device_info(c10::DeviceIndex device, aclrtDevAttr attr) {
  int64_t value = 0;
  if (aclrtGetDeviceInfo(static_cast<uint32_t>(device), attr, &value) != ACL_SUCCESS) {
    flagos::recent_error_message();  // consumed: the caller decides
    return std::nullopt;
  }
  return value;
}

int64_t required_info(c10::DeviceIndex device, aclrtDevAttr attr, const char* what) {
  int64_t value = 0;
  const aclError status = aclrtGetDeviceInfo(static_cast<uint32_t>(device), attr, &value);
  TORCH_CHECK(status == ACL_SUCCESS, "flagos: reading the ", what, " of flagos:", static_cast<int>(device),
              " (aclrtGetDeviceInfo) failed with ACL error ", status, ": ", flagos::recent_error_message());
  return value;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_fl backend: the flagos device";

  // Work still queued when the interpreter exits finishes before exit()
  // destroys C++ static objects: the simulator's stream workers run CPU
  // kernels that use them (oneDNN's caches), and on CANN a device torn down
  // under running kernels is no better. Registered in C, at the end of
  // interpreter finalization, so no Python code can unregister it.
  Py_AtExit(+[] { flagos::synchronize_devices_at_exit(); });

  // The "hccl" torch.distributed backend class, defined once torch.distributed
  // has registered c10d::Backend with pybind (torch_fl/distributed.py).
  m.def("_init_distributed", [](py::module_ target) {
    if (py::hasattr(target, "ProcessGroupHCCL")) {
      return;
    }
    py::class_<flagos::ProcessGroupHCCL, c10d::Backend, c10::intrusive_ptr<flagos::ProcessGroupHCCL>>(
        target, "ProcessGroupHCCL")
        .def(py::init<c10::intrusive_ptr<c10d::Store>, int, int, std::chrono::milliseconds>(), py::arg("store"),
             py::arg("rank"), py::arg("size"), py::arg("timeout"), py::call_guard<py::gil_scoped_release>());
  });

  m.def("_device_type", [] { return static_cast<int>(c10::DeviceType::PrivateUse1); });
  m.def("_device_count", [] { return flagos::device_count(); });
  m.def("_current_device", [] { return flagos::current_device(); });
  m.def("_set_device", [](c10::DeviceIndex d) {
    flagos::check_device_index(d);
    flagos::set_device(d);
  });
  m.def("_exchange_device", [](c10::DeviceIndex d) {
    flagos::check_device_index(d);
    return flagos::exchange_device(d);
  });
  m.def("_synchronize", [](c10::DeviceIndex d) {
    py::gil_scoped_release no_gil;
    flagos::synchronize_device(d);
  });

  // Streams are (stream id, device index) pairs on the Python side.
  m.def("_current_stream", [](c10::DeviceIndex d) {
    flagos::check_device_index(d);
    return flagos::current_stream(d).id();
  });
  m.def("_default_stream", [](c10::DeviceIndex d) { return flagos::default_stream(d).id(); });
  m.def("_new_stream", [](c10::DeviceIndex d) { return flagos::new_stream(d).id(); });
  m.def("_exchange_stream", [](int64_t id, c10::DeviceIndex d) {
    return flagos::exchange_stream(stream_of(id, d)).id();
  });
  m.def("_synchronize_stream", [](int64_t id, c10::DeviceIndex d) {
    py::gil_scoped_release no_gil;
    flagos::synchronize_stream(stream_of(id, d));
  });
  m.def("_query_stream", [](int64_t id, c10::DeviceIndex d) { return flagos::query_stream(stream_of(id, d)); });

  // The device's properties, from the runtime (torch.flagos.get_device_properties).
  m.def("_device_properties", [](c10::DeviceIndex d) {
    flagos::check_device_index(d);
    const char* soc = aclrtGetSocName();
    TORCH_CHECK(soc != nullptr, "flagos: aclrtGetSocName failed: ", flagos::recent_error_message());
    py::dict out;
    out["name"] = std::string(soc);
    out["total_memory"] = required_info(d, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, "total memory");
    out["ai_core_count"] = required_info(d, ACL_DEV_ATTR_AICORE_CORE_NUM, "AI cores");
    out["cube_core_count"] = required_info(d, ACL_DEV_ATTR_CUBE_CORE_NUM, "cube cores");
    out["vector_core_count"] = required_info(d, ACL_DEV_ATTR_VECTOR_CORE_NUM, "vector cores");
    out["l2_cache_size"] = required_info(d, ACL_DEV_ATTR_L2_CACHE_SIZE, "L2 cache");
    const std::optional<int64_t> arch = device_info(d, ACL_DEV_ATTR_NPU_ARCH);
    out["npu_arch"] = arch.has_value() ? py::object(py::int_(*arch)) : py::object(py::none());
    return out;
  });
  m.def("_mem_get_info", [](c10::DeviceIndex d) { return flagos::memory_info(d); });
  m.def("_can_access_peer", [](c10::DeviceIndex d, c10::DeviceIndex peer) {
    flagos::check_device_index(d);
    flagos::check_device_index(peer);
    if (d == peer) return false;  // as torch.cuda.can_device_access_peer
    int32_t can = 0;
    const aclError status = aclrtDeviceCanAccessPeer(&can, d, peer);
    TORCH_CHECK(status == ACL_SUCCESS, "flagos: aclrtDeviceCanAccessPeer(flagos:", static_cast<int>(d), ", flagos:",
                static_cast<int>(peer), ") failed with ACL error ", status, ": ", flagos::recent_error_message());
    return can != 0;
  });

  // Diagnostic switches of the waits the backend inserts (docs/streams.md),
  // for negative-control tests only: one kind by name, or all.
  m.def("_stream_wait_kinds", [] {
    std::vector<std::string> names;
    for (int k = 0; k < flagos::kStreamWaitKinds; ++k)
      names.emplace_back(flagos::stream_wait_name(static_cast<flagos::StreamWait>(k)));
    return names;
  });
  m.def(
      "_set_stream_waits_enabled",
      [](bool enabled, std::optional<std::string> kind) {
        if (kind.has_value()) {
          flagos::set_stream_wait_enabled(wait_kind(*kind), enabled);
          return;
        }
        for (int k = 0; k < flagos::kStreamWaitKinds; ++k)
          flagos::set_stream_wait_enabled(static_cast<flagos::StreamWait>(k), enabled);
      },
      py::arg("enabled"), py::arg("kind") = py::none());
  m.def("_stream_waits_enabled", [](const std::string& kind) { return flagos::stream_wait_enabled(wait_kind(kind)); });

  // Pinned host memory.
  m.def("_is_pinned_ptr", [](uintptr_t ptr) { return flagos::is_pinned(reinterpret_cast<const void*>(ptr)); });
  m.def("_host_empty_cache", [] { flagos::pinned_allocator()->empty_cache(); });
  m.def("_host_memory_stats", [] {
    const at::HostStats stats = flagos::pinned_allocator()->get_stats();
    py::dict out;
    const auto put = [&](const char* name, const auto& stat) {
      out[(std::string(name) + ".current").c_str()] = stat.current;
      out[(std::string(name) + ".peak").c_str()] = stat.peak;
      out[(std::string(name) + ".allocated").c_str()] = stat.allocated;
      out[(std::string(name) + ".freed").c_str()] = stat.freed;
    };
    put("allocations", stats.allocations);
    put("allocated_bytes", stats.allocated_bytes);
    put("active_requests", stats.active_requests);
    put("active_bytes", stats.active_bytes);
    out["num_host_alloc"] = stats.num_host_alloc;
    out["num_host_free"] = stats.num_host_free;
    return out;
  });
  m.def("_host_reset_peak_stats", [] { flagos::pinned_allocator()->reset_peak_stats(); });
  m.def("_host_reset_accumulated_stats", [] { flagos::pinned_allocator()->reset_accumulated_stats(); });

  // The allocator's statistics of one device, as torch.cuda.memory_stats
  // names them ("allocated_bytes.all.current", ...).
  m.def("_memory_stats", [](c10::DeviceIndex d) {
    const c10::CachingDeviceAllocator::DeviceStats s = flagos::device_stats(d);
    py::dict out;
    auto add = [&out](const std::string& name, const c10::CachingAllocator::StatArray& stat) {
      const char* pools[] = {"all", "small_pool", "large_pool"};
      for (size_t i = 0; i < 3; ++i) {
        out[py::str(name + "." + pools[i] + ".current")] = stat[i].current;
        out[py::str(name + "." + pools[i] + ".peak")] = stat[i].peak;
        out[py::str(name + "." + pools[i] + ".allocated")] = stat[i].allocated;
        out[py::str(name + "." + pools[i] + ".freed")] = stat[i].freed;
      }
    };
    add("allocation", s.allocation);
    add("segment", s.segment);
    add("active", s.active);
    add("inactive_split", s.inactive_split);
    add("allocated_bytes", s.allocated_bytes);
    add("reserved_bytes", s.reserved_bytes);
    add("active_bytes", s.active_bytes);
    add("inactive_split_bytes", s.inactive_split_bytes);
    add("requested_bytes", s.requested_bytes);
    out["num_alloc_retries"] = s.num_alloc_retries;
    out["num_ooms"] = s.num_ooms;
    out["num_device_alloc"] = s.num_device_alloc;
    out["num_sync_all_streams"] = s.num_sync_all_streams;
    return out;
  });
  m.def("_reset_peak_memory_stats", &flagos::reset_peak_stats);
  m.def("_reset_accumulated_memory_stats", &flagos::reset_accumulated_stats);
  m.def("_empty_cache", [] { flagos::empty_cache(); });

  // Diagnostic switch for negative-control tests and overhead benchmarks.
  m.def("_set_guards_enabled", &flagos::set_guards_enabled);
  m.def("_guards_enabled", &flagos::guards_enabled);
  m.def("_set_profiler_plugin_enabled", &flagos::set_profiler_plugin_enabled);
  m.def("_profiler_plugin_enabled", &flagos::profiler_plugin_enabled);
  m.def("_set_device_check", &flagos::set_device_check_enabled);
  m.def("_device_check", &flagos::device_check_enabled);
  m.def("_set_executor_cache", &flagos::set_executor_cache_enabled);
  // The executor cache's counters of one device, or of all of them (-1).
  m.def(
      "_executor_cache_stats",
      [](c10::DeviceIndex device) {
        py::dict out;
        if (device < 0) {
          const flagos::ExecutorCacheStats s = flagos::executor_cache_stats();
          out["hits"] = s.hits;
          out["misses"] = s.misses;
          out["evictions"] = s.evictions;
          out["rebinds"] = s.rebinds;
        } else {
          const flagos::DeviceExecutorCacheStats s = flagos::executor_cache_stats(device);
          out["hits"] = s.hits;
          out["misses"] = s.misses;
          out["evictions"] = s.evictions;
          out["rebinds"] = s.rebinds;
          out["cached"] = s.cached;
        }
        return out;
      },
      py::arg("device") = -1);
  m.def("_reset_executor_cache_stats", &flagos::reset_executor_cache_stats);
  m.def("_executor_cache_misses_by_operator", &flagos::executor_cache_misses_by_operator);
  m.def("_set_executor_cache_admission", &flagos::set_executor_cache_admission);
  m.def("_executor_cache_admission", &flagos::executor_cache_admission);
  // The benchmark's per-phase probes (runtime/phases.h): the calling thread's
  // totals in ns since its last reset.
  m.def("_set_phase_probes", &flagos::phases::set_enabled);
  m.def("_reset_phase_totals", &flagos::phases::reset);
  m.def("_phase_totals", [] {
    const flagos::phases::Totals totals = flagos::phases::read();
    py::dict out;
    for (int p = 0; p < flagos::phases::kCount; ++p) {
      const auto phase = static_cast<flagos::phases::Phase>(p);
      out[py::str(std::string(flagos::phases::name(phase)) + "_ns")] = totals.ns[p];
    }
    out["kernels"] = totals.kernels;
    out["launches"] = totals.launches;
    return out;
  });
  m.def("_set_composite_guards_enabled", &flagos::set_composite_guards_enabled);
  m.def("_composite_guards_enabled", &flagos::composite_guards_enabled);

  m.def("_fallback_counts", &flagos::fallback_counts);
  m.def("_reset_fallback_counts", &flagos::reset_fallback_counts);
  m.def("_set_strict", &flagos::set_strict);
  m.def("_strict", &flagos::strict);
  // The default generator of a device, as a torch.Generator sharing its state.
  m.def("_default_generator", [](c10::DeviceIndex d) {
    flagos::check_device_index(d);
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(at::detail::getPrivateUse1Hooks().getDefaultGenerator(d)));
  });
  m.def("_manual_seed", [](c10::DeviceIndex d, uint64_t seed) {
    // A copy shares the generator's implementation, so seeding it seeds the default.
    at::Generator generator = at::detail::getPrivateUse1Hooks().getDefaultGenerator(d);
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_current_seed(seed);
  });
  m.def("_opapi_library", [] { return std::string(flagos::opapi_library_path()); });
}
