#include "runtime/opapi.h"

#include <c10/util/Exception.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace flagos {
namespace {

// The default library sits next to the backend library (torch_fl/lib), so it
// is found whatever the working directory is.
std::string default_library_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&default_library_path), &info) != 0 &&
      info.dli_fname != nullptr) {
    std::string self(info.dli_fname);
    const auto slash = self.rfind('/');
    if (slash != std::string::npos) {
      return self.substr(0, slash + 1) + FLAGOS_DEFAULT_OPAPI_LIB;
    }
  }
  return FLAGOS_DEFAULT_OPAPI_LIB;
}

struct OpApiLibrary {
  std::string path;
  void* handle = nullptr;
  std::string error;

  OpApiLibrary() {
    const char* override_path = std::getenv("FLAGOS_OPAPI_LIB");
    path = (override_path != nullptr && *override_path != '\0') ? override_path
                                                               : default_library_path();
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* message = dlerror();
      error = message != nullptr ? message : "unknown dlopen error";
    }
  }
};

const OpApiLibrary& library() {
  static const OpApiLibrary lib;
  return lib;
}

}  // namespace

void* opapi_symbol(const char* symbol) {
  const OpApiLibrary& lib = library();
  TORCH_CHECK(lib.handle != nullptr, "flagos: cannot load the ACLNN operator library '", lib.path,
              "' (set FLAGOS_OPAPI_LIB to override): ", lib.error);
  void* address = dlsym(lib.handle, symbol);
  TORCH_CHECK(address != nullptr, "flagos: the operator library '", lib.path, "' has no ",
              symbol);
  return address;
}

const char* opapi_library_path() { return library().path.c_str(); }

}  // namespace flagos
