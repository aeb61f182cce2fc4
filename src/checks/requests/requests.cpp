#include "checks/requests/requests.hpp"

#include <fmt/format.h>

#include "trackers/checksums.hpp"
#include "trackers/requests.hpp"

namespace mpisentry::checks {
namespace {

void freed_while_active(const RequestView& request) {
  const char* started_by = function_info(request.record.function).name;
  report::Finding finding;
  finding.check = report::Check::RequestPrematureFree;
  finding.summary = {fmt::format("MPI_Request_free frees the request of {} while its operation is still active:",
                                 started_by),
                     request.receives ? "the receive may still write its buffer, and nothing can tell when it has."
                                      : "nothing can tell when the operation has completed."};
  finding.parties.push_back({{world_rank()}, "frees it", "MPI_Request_free(request)", {}});
  finding.parties.push_back(
      {{world_rank()}, "started it", call_text(request.record), call_site_stack(request.call_site)});
  finding.key = fmt::format("premature free {} {}", started_by, request.call_site);
  report(std::move(finding), /*own_stack=*/true);
}

void left_at_finalize(const RequestView& request) {
  const char* started_by = function_info(request.record.function).name;
  report::Finding finding;
  finding.check = report::Check::RequestNotFreed;
  finding.summary = {request.active       ? fmt::format("A request of {} was never completed nor freed.", started_by)
                     : request.persistent ? fmt::format("A persistent request of {} is inactive but was never freed.",
                                                        started_by)
                                          : fmt::format("A request of {} completed (MPI_Request_get_status said so) "
                                                        "but was never freed.",
                                                        started_by)};
  finding.parties.push_back(
      {{world_rank()}, "started it", call_text(request.record), call_site_stack(request.call_site)});
  finding.key = fmt::format("not freed {} {}", started_by, request.call_site);
  report(std::move(finding));
}

void send_buffer_written(const RequestView& request) {
  const char* started_by = function_info(request.record.function).name;
  const std::string start = request.partitioned ? fmt::format("the MPI_Pready of the last partition of {}", started_by)
                            : request.persistent ? fmt::format("MPI_Start of {}", started_by)
                                                 : std::string(started_by);
  report(modified_buffer_finding("send buffer", started_by, start, call_text(request.record), request.call_site),
         /*own_stack=*/true);
}

}  // namespace

void start_request_checks(const StartContext&) {
  RequestCheckEvents events;
  if (on(report::Check::RequestPrematureFree)) events.freed_while_active = freed_while_active;
  if (on(report::Check::RequestNotFreed)) events.left_at_finalize = left_at_finalize;
  if (on(report::Check::MemoryIllegalModification)) events.send_buffer_written = send_buffer_written;
  listen_for_request_checks(events);
}

}  // namespace mpisentry::checks
