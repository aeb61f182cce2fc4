#include "records/lifecycle.hpp"

#include <pthread.h>

namespace mpisentry::lifecycle {

void watch_forks() {
  pthread_atfork(nullptr, nullptr, [] { detail::forked_child.store(true, std::memory_order_release); });
}

}  // namespace mpisentry::lifecycle
