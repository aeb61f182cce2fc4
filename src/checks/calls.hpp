// The objects the wrappers hold around a forwarded call, for the checks
// that judge it (the message channel, the request tracker, the buffers MPI
// owns):
//   (SendCheck(...)).done(PMPI_Send(...))
// C++17 evaluates the object before the call's arguments, so a constructor
// may swap MPI_STATUS_IGNORE for a status of its own before MPI sees it,
// and done() sees the call's result. With the checks off they only test a
// flag or two (the blocking ones also compare their buffer for
// LOCAL:MEMORY:OVERLAP, trackers/owned_buffers.hpp). Here, above the
// analyses, because one call feeds several.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "api/functions.hpp"
#include "trackers/message_channel.hpp"
#include "trackers/checksums.hpp"
#include "trackers/owned_buffers.hpp"
#include "trackers/requests.hpp"

namespace mpisentry::checks {

// A blocking send: its record once it succeeded. The buffer's checksum
// for the record is taken before the call: MPI_Sendrecv_replace receives
// into it.
class SendCheck {
 public:
  SendCheck(FunctionId function, const void* buffer, std::int64_t count, MPI_Datatype type, int dest, int tag,
            MPI_Comm comm, const void* call_site)
      : on_(shadowing()), function_(function), count_(count), type_(type), dest_(dest), tag_(tag), comm_(comm),
        call_site_(call_site) {
    if (watching_overlaps() && dest != MPI_PROC_NULL) buffer_used(buffer, count, type, BufferUse::Read, function);
    if (on_ && summing_sends() && dest != MPI_PROC_NULL) sum_into({buffer, count, type}, data_);
  }
  int done(int result) const {
    if (on_ && result == MPI_SUCCESS) sent(function_, count_, type_, dest_, tag_, comm_, call_site_, data_);
    return result;
  }

 private:
  bool on_;
  BufferChecksum data_;  // the send buffer's checksum, for the record (summing_sends)
  FunctionId function_;
  std::int64_t count_;
  MPI_Datatype type_;
  int dest_, tag_;
  MPI_Comm comm_;
  const void* call_site_;
};

// A blocking receive (MPI_Recv, MPI_Mrecv): *status is swapped for one of
// its own when the program ignores it.
class ReceiveCheck {
 public:
  ReceiveCheck(FunctionId function, void* buffer, std::int64_t count, MPI_Datatype type, int source, int tag,
               MPI_Comm comm, MPI_Status*& status, const void* call_site)
      : ReceiveCheck(WithoutBuffer{}, function, count, type, source, tag, comm, status, call_site) {
    if (watching_overlaps() && source != MPI_PROC_NULL) buffer_used(buffer, count, type, BufferUse::Write, function);
  }
  // MPI_Mrecv: the communicator is the probe's.
  ReceiveCheck(FunctionId function, void* buffer, std::int64_t count, MPI_Datatype type, const MPI_Message* message,
               MPI_Status*& status, const void* call_site)
      : ReceiveCheck(WithoutBuffer{}, function, count, type, Receive::kMatched, MPI_ANY_TAG, MPI_COMM_NULL, status,
                     call_site) {
    if (on_ && message) receive_.comm = take_probed(*message);
    if (watching_overlaps() && message && *message != MPI_MESSAGE_NO_PROC)
      buffer_used(buffer, count, type, BufferUse::Write, function);
  }
  int done(int result) const {
    if (!on_) return result;
    if (result == MPI_SUCCESS) {
      received(receive_, *status_);
    } else {
      // A truncated message is consumed (and its status is set): its record
      // too. Other errors leave the status unset.
      int error_class = MPI_SUCCESS;
      PMPI_Error_class(result, &error_class);
      if (error_class == MPI_ERR_TRUNCATE) {
        Receive consumed = receive_;
        consumed.in_order = false;
        received(consumed, *status_);
      }
    }
    return result;
  }

 private:
  // Without the buffer: the message checks' part of both constructors.
  struct WithoutBuffer {};
  ReceiveCheck(WithoutBuffer, FunctionId function, std::int64_t count, MPI_Datatype type, int source, int tag,
               MPI_Comm comm, MPI_Status*& status, const void* call_site)
      : on_(shadowing()), receive_{function, count, type, comm, true, nullptr, call_site} {
    if (!on_) return;
    if (status == MPI_STATUS_IGNORE) status = &own_;
    status_ = status;
    receive_.source = source;
    receive_.tag = tag;
  }

  bool on_;
  Receive receive_;
  MPI_Status* status_ = nullptr;
  MPI_Status own_;
};

// MPI_Sendrecv and MPI_Sendrecv_replace.
class SendReceiveCheck {
 public:
  SendReceiveCheck(FunctionId function, const void* send_buffer, std::int64_t send_count, MPI_Datatype send_type,
                   int dest, int send_tag, void* receive_buffer, std::int64_t receive_count,
                   MPI_Datatype receive_type, int source, int receive_tag, MPI_Comm comm, MPI_Status*& status,
                   const void* call_site)
      : send_(function, send_buffer, send_count, send_type, dest, send_tag, comm, call_site),
        receive_(function, receive_buffer, receive_count, receive_type, source, receive_tag, comm, status,
                 call_site) {}
  int done(int result) const { return receive_.done(send_.done(result)); }

 private:
  SendCheck send_;
  ReceiveCheck receive_;
};

// MPI_Probe, MPI_Iprobe, MPI_Mprobe and MPI_Improbe (message: nullptr for
// the first two; flag: nullptr for the blocking ones): a matched probe's
// communicator, and for GLOBAL:MSG:RACE which message a probe from
// MPI_ANY_SOURCE found. A probe whose status the program ignores is not
// judged (it cannot act on the sender). The arguments come with the
// result, read after the call.
class ProbeCheck {
 public:
  ProbeCheck() : on_(shadowing()) {}
  int done(int result, int source, int tag, MPI_Comm comm, const MPI_Message* message, const int* flag,
           const MPI_Status* status, const void* call_site) const {
    if (!on_ || result != MPI_SUCCESS || (flag && !*flag)) return result;
    // Judged before its message counts as probed and not yet received.
    if (judging_races() && source == MPI_ANY_SOURCE && status != MPI_STATUS_IGNORE)
      probe_found(comm, tag, *status, call_site);
    if (message) probed(*message, comm);
    return result;
  }

 private:
  bool on_;
};

// MPI_Imrecv: the message handle is read before the call clears it.
class MatchedStartCheck {
 public:
  MatchedStartCheck(FunctionId function, std::int64_t count, MPI_Datatype type, const MPI_Message* message,
                    MPI_Request* request, const void* call_site)
      : on_(tracking()), function_(function), request_(request), count_(count), type_(type), call_site_(call_site) {
    if (on_ && message) comm_ = take_probed(*message);
  }
  int done(int result) const {
    if (on_ && result == MPI_SUCCESS) started_matched(*request_, function_, count_, type_, comm_, call_site_);
    return result;
  }

 private:
  bool on_;
  FunctionId function_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Request* request_;
  std::int64_t count_;
  MPI_Datatype type_;
  const void* call_site_;
};

}  // namespace mpisentry::checks
