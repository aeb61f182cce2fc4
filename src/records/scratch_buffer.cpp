#include "records/scratch_buffer.hpp"

namespace mpisentry {
namespace {

// The thread's free buffers (a pointer, so that the TLS slot is trivial).
thread_local std::vector<void*>* free_buffers __attribute__((tls_model("initial-exec"))) = nullptr;

}  // namespace

void ScratchBuffer::take() {
  if (!free_buffers) free_buffers = new std::vector<void*>;  // kept for the thread's life: a few KiB
  if (free_buffers->empty()) {
    bytes_ = new Bytes;
    bytes_->resize(8);
  } else {
    bytes_ = static_cast<Bytes*>(free_buffers->back());
    free_buffers->pop_back();
  }
}

void ScratchBuffer::give_back() { free_buffers->push_back(bytes_); }

}  // namespace mpisentry
