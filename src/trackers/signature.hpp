// Type signatures (MPI's sequence of basic types that a message carries),
// reduced to what can be compared across ranks: the bytes and a hash of the
// basic types in order, with runs merged, so that 4 x MPI_INT, a contiguous
// type of 4 MPI_INT and a vector of 2 blocks of 2 MPI_INT hash the same
// whatever their layout in memory.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mpisentry::checks {

struct Signature {
  std::int64_t bytes = 0;
  std::uint64_t hash = 0;
  std::int64_t elements = 0;  // basic elements
  // MPI_BYTE or MPI_PACKED inside: MPI lets such data match any types of
  // the same size, so only the bytes are compared.
  bool untyped = false;
  // A type the checker cannot read (a Fortran-parameterized one, or any
  // error): not compared at all.
  bool known = true;

  // Whether MPI's type matching rules are broken, given the same bytes.
  bool differs_from(const Signature& other) const {
    return known && other.known && !untyped && !other.untyped && hash != other.hash;
  }
};

// What the checks need of a datatype, read from MPI once per datatype
// (MPI_Type_get_envelope and _contents cost about as much as a message) and
// kept until MPI_Type_free.
struct TypeInfo {
  struct Run {
    MPI_Datatype type;  // a basic type
    std::int64_t count;
    std::int64_t type_size;  // its bytes
    std::uint64_t code;      // the type as every process of the job knows it (basic_type_code)
  };
  std::vector<Run> element;  // the basic types of one element, runs merged
  std::int64_t size = 0;     // bytes of one element
  // Where an element's bytes lie (MPI_Type_get_extent_x, _get_true_extent_x).
  std::int64_t extent = 0;
  std::int64_t true_lb = 0, true_extent = 0;
  bool known = false;        // the type could be read (see Signature::known)
  bool named = false;        // a predefined type (MPI_COMBINER_NAMED)
  std::string text;          // datatype_text()
};
// Shared, so that a record may outlive MPI_Type_free of its type; predefined
// types are never freed and their references count nothing.
using TypeRef = std::shared_ptr<const TypeInfo>;

namespace detail {
// The thread's last predefined type: a message mostly has the type of the
// one before it, and a predefined type is never freed.
extern thread_local MPI_Datatype last_type __attribute__((tls_model("initial-exec")));
extern thread_local const TypeInfo* last_info __attribute__((tls_model("initial-exec")));
TypeRef cached_type_info(MPI_Datatype type);
}  // namespace detail

// `type` as the checks see it, from the cache. Thread-safe; a datatype that
// another thread frees meanwhile is the program's error. The last type's
// way is inline: a reference returned from a call is read back wide from
// its narrow stores, which waits (store forwarding fails).
inline TypeRef type_info(MPI_Datatype type) {
  if (detail::last_info && type == detail::last_type) return TypeRef(TypeRef(), detail::last_info);
  return detail::cached_type_info(type);
}

// Where `count` elements of `type` lie when the type lays them out without
// gaps: the first byte's offset from the buffer, and how many bytes; none
// for a type with gaps or no elements.
struct DenseBytes {
  std::int64_t first = 0, bytes = 0;
};
inline std::optional<DenseBytes> dense_bytes(std::int64_t count, MPI_Datatype type) {
  if (count <= 0 || type == MPI_DATATYPE_NULL) return std::nullopt;
  const TypeRef info = type_info(type);
  const std::int64_t size = info->size;
  if (size <= 0 || info->true_extent != size || (count > 1 && info->extent != size)) return std::nullopt;
  return DenseBytes{info->true_lb, size * count};
}

// From the MPI_Type_free wrapper, before the call: MPI may hand the handle
// out again for another type.
void type_freed(MPI_Datatype type);

// The signature of `count` elements of a type. With `max_bytes` >= 0 only
// its first max_bytes bytes (a receive that got a shorter message).
Signature signature_of(const TypeInfo& type, std::int64_t count, std::int64_t max_bytes = -1);
Signature signature_of(MPI_Datatype type, std::int64_t count, std::int64_t max_bytes = -1);

// "MPI_INT", or "a derived datatype (4 x MPI_INT)" for a short one,
// "a derived datatype (16 B)" for the rest.
std::string datatype_text(MPI_Datatype type);

// "4 x MPI_INT (16 B)"
std::string amount_text(MPI_Datatype type, std::int64_t count);
std::string amount_text(const TypeInfo& type, std::int64_t count);

}  // namespace mpisentry::checks
