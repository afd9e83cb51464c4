// The ACLNN operator library, loaded by name at run time as real
// integrations load libopapi.so. FLAGOS_OPAPI_LIB names another library.
#pragma once

namespace flagos {

// The address of `symbol` in the operator library; raises an error that names
// the library and the symbol when either cannot be found.
void* opapi_symbol(const char* symbol);

// The path of the operator library in use.
const char* opapi_library_path();

}  // namespace flagos
