// The flagos device in torch.profiler: a Kineto plugin that turns the
// runtime's launch records into device events (profiler.cc, docs/profiler.md).
#pragma once

namespace flagos {

// A diagnostic switch for negative-control tests: off, profiles started from
// now on get no device events. A CANN build has no plugin (always off).
void set_profiler_plugin_enabled(bool enabled);
bool profiler_plugin_enabled();

}  // namespace flagos
