// LOCAL:MEMORY:ILLEGAL_MODIFICATION: MPI owns a send buffer (or an RMA
// operation's origin buffer) from the call that starts the operation to the
// call that completes it; the program may read it (MPI 3.0) but not write
// it. A checksum of the bytes the datatype lays out (PMPI_Pack's, or the
// bytes themselves for a predefined type without gaps) is taken in the
// starting call, after MPI took the buffer, and again in the completing
// call, before the program gets it back: the checker reads the buffer only
// inside calls that hand it to MPI, and never writes it. Which buffer of a
// record is a send buffer: sending_part() in checksums.cpp.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

#include "findings/findings.hpp"
#include "records/call_record.hpp"

namespace mpisentry::checks {

struct BufferChecksum {
  bool taken = false;  // false: nothing to compare (no send buffer, MPI_IN_PLACE, a count pack cannot take)
  std::uint64_t value = 0;
  // What was summed, decided at the start: the communicator that decided
  // it may be freed before the operation completes.
  const void* buffer = nullptr;
  std::int64_t count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  // Derived datatypes freed before it was taken: a derived type freed since
  // may have been handed out again for another layout, and the checksum is
  // then not compared.
  std::uint64_t types_freed = 0;
  bool derived = false;
};

// checks/lifecycle.def: makes what the checksums pack on, when
// LOCAL:MEMORY:ILLEGAL_MODIFICATION is on.
void start_checksums(const StartContext& context);

// `count` elements of `type` at `buffer`.
struct BufferPart {
  const void* buffer = nullptr;
  std::int64_t count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

// The checksum of `part`'s bytes, written in place (a checksum returned and
// copied at once into the request table's entry stalled on its fields'
// stores, about 10 ns a start); not taken for an empty part.
void sum_into(const BufferPart& part, BufferChecksum& into);

// The checksum of the send buffer of the operation `started` records, when
// it has one, in place.
void sum_send_buffer(const CallRecord& started, BufferChecksum& into);

// Whether the buffer changed since `then` was taken: false when it
// cannot tell.
bool buffer_changed(const BufferChecksum& then);

// LOCAL:MEMORY:ILLEGAL_MODIFICATION, for the analysis that found
// buffer_changed (checks/requests of a send buffer, checks/rma of an origin
// buffer) to report with its own stack: the `buffer` ("send buffer",
// "origin buffer") of the operation `started_by` began (`start`, its words
// for the starting call; `started_call` its text) was written before the
// call this thread is in completed it.
report::Finding modified_buffer_finding(const char* buffer, const char* started_by, const std::string& start,
                                        const std::string& started_call, const void* started_at);

// MPI_Type_free, before the call: see BufferChecksum::types_freed.
void datatype_freed() noexcept;

// How many derived datatypes the program freed so far: a type an operation
// names may have been freed (and its handle handed out again) when this
// changed since the operation started.
std::uint64_t datatypes_freed() noexcept;

}  // namespace mpisentry::checks
