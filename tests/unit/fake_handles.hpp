// Handles made of numbers for tests that never pass them to MPI: MPICH's
// handles are integers, Open MPI's are pointers.
#pragma once

#include <cstdint>
#include <type_traits>

namespace mpisentry::test {

template <typename Handle>
Handle fake_handle(std::uintptr_t number) {
  if constexpr (std::is_pointer_v<Handle>) return reinterpret_cast<Handle>(number);
  else return static_cast<Handle>(number);
}

template <typename Handle>
std::uintptr_t number_of(Handle handle) {
  if constexpr (std::is_pointer_v<Handle>) return reinterpret_cast<std::uintptr_t>(handle);
  else return static_cast<std::uintptr_t>(handle);
}

}  // namespace mpisentry::test
