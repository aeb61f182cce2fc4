// Internal to src/stacks: how a loaded module is named and found, alike on the
// side that locates frames and on the side that symbolizes them.
#pragma once

#include <link.h>

#include <cstdint>
#include <string>

namespace mpisentry::stacks::detail {

// The running program's file, as every live thread sees it: /proc/self/exe
// cannot be read once the main thread has exited (pthread_exit from main),
// and then the program's frames would get no names.
inline constexpr const char* kProgramFile = "/proc/thread-self/exe";

// The loader's entry of the module that holds `address`; null when none does.
const link_map* module_at(std::uintptr_t address);

// The path that names a module in every process: realpath of the name it was
// loaded as (the empty name of the main program: kProgramFile's target), or
// the name itself when it is no file (the vDSO).
std::string canonical_module_path(const char* loaded_name);

}  // namespace mpisentry::stacks::detail
