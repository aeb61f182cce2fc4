#include "monitor/channel.hpp"

#include <time.h>

#include <algorithm>
#include <numeric>

namespace mpisentry::monitor {
namespace {

static_assert(sizeof(Summary) == Summary::kFields * sizeof(std::int64_t));

void combine_summaries(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto* from = static_cast<const Summary*>(in);
  auto* into = static_cast<Summary*>(inout);
  for (int i = 0; i < *count; ++i) combine(from[i], into[i]);
}

void sleep_for_microseconds(long us) {
  timespec pause{0, us * 1000};
  nanosleep(&pause, nullptr);
}

}  // namespace

bool complete_by(MPI_Request& request, std::optional<std::chrono::steady_clock::time_point> deadline) {
  // Short sleeps first for a quick round, longer ones when a peer is slow,
  // so that a monitor waiting for a computing rank costs almost no CPU.
  long pause_us = 50;
  int done = 0;
  while (PMPI_Test(&request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
    if (deadline && std::chrono::steady_clock::now() >= *deadline) return false;
    sleep_for_microseconds(pause_us);
    pause_us = std::min(pause_us * 2, 2000L);
  }
  return true;
}

Channel::Channel(MPI_Comm comm) : comm_(comm) {
  PMPI_Comm_set_name(comm_, "mpisentry monitor");
  PMPI_Comm_rank(comm_, &rank_);
  PMPI_Comm_size(comm_, &size_);
  PMPI_Type_contiguous(Summary::kFields, MPI_INT64_T, &summary_type_);
  PMPI_Type_commit(&summary_type_);
  PMPI_Op_create(&combine_summaries, /*commute=*/1, &combine_op_);
}

void Channel::close() {
  PMPI_Op_free(&combine_op_);
  PMPI_Type_free(&summary_type_);
  PMPI_Comm_free(&comm_);
}

Summary Channel::allreduce(const Summary& mine) {
  Summary result;
  MPI_Request request;
  PMPI_Iallreduce(&mine, &result, 1, summary_type_, combine_op_, comm_, &request);
  complete(request);
  return result;
}

std::vector<std::string> Channel::gather(const std::string& mine) {
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank_ == 0 ? size_ : 0);
  MPI_Request request;
  PMPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm_, &request);
  complete(request);

  std::vector<int> offsets(lengths.size());
  if (!lengths.empty()) std::exclusive_scan(lengths.begin(), lengths.end(), offsets.begin(), 0);
  std::string all(rank_ == 0 ? static_cast<std::size_t>(offsets.back() + lengths.back()) : 0, '\0');
  PMPI_Igatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, comm_,
                &request);
  complete(request);

  std::vector<std::string> parts;
  for (std::size_t i = 0; i < lengths.size(); ++i) parts.emplace_back(all, offsets[i], lengths[i]);
  return parts;
}

std::int32_t Channel::broadcast(std::int32_t value_at_root) {
  MPI_Request request;
  PMPI_Ibcast(&value_at_root, 1, MPI_INT32_T, 0, comm_, &request);
  complete(request);
  return value_at_root;
}

std::string Channel::broadcast(const std::string& value_at_root) {
  std::string value = value_at_root;
  auto length = broadcast(static_cast<std::int32_t>(value.size()));
  value.resize(static_cast<std::size_t>(length));
  MPI_Request request;
  PMPI_Ibcast(value.data(), length, MPI_CHAR, 0, comm_, &request);
  complete(request);
  return value;
}

}  // namespace mpisentry::monitor
