// torch_fl._C: the Python face of the backend. The only translation unit
// that includes torch/extension.h (it costs ~25 s to compile).
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <torch/csrc/Generator.h>
#include <torch/extension.h>

#include <mutex>

#include "aten/fallback.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/launch.h"
#include "runtime/opapi.h"
#include "runtime/phases.h"
#include "runtime/stream.h"

namespace py = pybind11;

namespace {

c10::Stream stream_of(int64_t stream_id, c10::DeviceIndex device) {
  return c10::Stream(c10::Stream::UNSAFE, flagos::flagos_device(device), stream_id);
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_fl backend: the flagos device";

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
  m.def("_set_device_check", &flagos::set_device_check_enabled);
  m.def("_device_check", &flagos::device_check_enabled);
  m.def("_set_executor_cache", &flagos::set_executor_cache_enabled);
  m.def("_executor_cache_stats", [] {
    const flagos::ExecutorCacheStats s = flagos::executor_cache_stats();
    py::dict out;
    out["hits"] = s.hits;
    out["misses"] = s.misses;
    out["evictions"] = s.evictions;
    out["rebinds"] = s.rebinds;
    return out;
  });
  m.def("_reset_executor_cache_stats", &flagos::reset_executor_cache_stats);
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
