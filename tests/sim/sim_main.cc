// The simulator's own tests, run by tests/sim/test_sim_runtime.py (cases:
// tests/sim/sim_<concept>.cc, harness: sim_harness.h).
//
//   flagos_sim_tests           run every default case (needs >= 4 devices)
//   flagos_sim_tests NAME...   run the named cases, environment cases included
//   flagos_sim_tests --list    list the cases ("env" marks environment cases)
//
// Environment cases expect a setting (FLAGOS_SIM_*) that the pytest side
// provides. Exit status 0 when every selected case passes.
#include <cstdio>
#include <string>
#include <vector>

#include "sim_harness.h"

using fsim_test::Case;
using fsim_test::cases;
using fsim_test::Failure;


int main(int argc, char** argv) {
  std::vector<const Case*> selected;
  if (argc == 2 && std::string(argv[1]) == "--list") {
    for (const Case& c : cases()) std::printf("%s%s\n", c.name, c.env ? " env" : "");
    return 0;
  }
  if (argc == 1) {
    if (fsimDeviceCount() < 4) {
      std::printf("the default cases need at least 4 simulated devices (FLAGOS_SIM_DEVICES)\n");
      return 2;
    }
    for (const Case& c : cases())
      if (!c.env) selected.push_back(&c);
  }
  for (int i = 1; i < argc; ++i) {
    const Case* found = nullptr;
    for (const Case& c : cases())
      if (argv[i] == std::string(c.name)) found = &c;
    if (found == nullptr) {
      std::printf("unknown case '%s' (see --list)\n", argv[i]);
      return 2;
    }
    selected.push_back(found);
  }
  int failed = 0;
  for (const Case* c : selected) {
    try {
      c->fn();
      std::printf("PASS %s\n", c->name);
    } catch (const Failure& f) {
      ++failed;
      std::printf("FAIL %s: %s\n", c->name, f.what.c_str());
    }
    std::fflush(stdout);
    if (!c->env) {  // default cases leave no faults, modes or queued work behind
      fsimClearFaults();
      fsimSetMismatchMode(FSIM_MISMATCH_ERROR);
      fsimSetStreamMode(FSIM_STREAMS_ASYNC);
      fsimDrainStreams();
    }
  }
  std::printf("%zu passed, %d failed\n", selected.size() - failed, failed);
  return failed == 0 ? 0 : 1;
}
