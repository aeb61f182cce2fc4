// A thread's scratch memory for the copies a call makes of its arrays (a
// Waitall's handles and statuses), reused from call to call.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace mpisentry {

// Buffers of one thread's calls, reused: a Waitall of many requests would
// otherwise allocate and clear its copies on every call. A call nested in
// another (a generalized request's callback that calls MPI) gets a buffer
// of its own.
class ScratchBuffer {
 public:
  ScratchBuffer() = default;  // takes nothing until get()
  ~ScratchBuffer() {
    if (bytes_) give_back();
  }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  // At least `size` elements of T, left as the last user left them.
  template <typename T>
  T* get(std::size_t size) {
    if (!bytes_) take();
    bytes_->resize(std::max(bytes_->size(), size * sizeof(T)));
    return reinterpret_cast<T*>(bytes_->data());
  }

 private:
  // Aligned for MPI_Request, MPI_Status and the table's entries.
  struct alignas(8) Chunk {
    unsigned char bytes[8];
  };
  struct Bytes {
    std::vector<Chunk> chunks;
    void resize(std::size_t bytes) { chunks.resize((bytes + 7) / 8); }
    std::size_t size() const { return chunks.size() * 8; }
    unsigned char* data() { return chunks.front().bytes; }
  };
  void take();
  void give_back();
  Bytes* bytes_ = nullptr;
};

}  // namespace mpisentry
