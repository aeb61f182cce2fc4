#include "checks/failed_calls/failed_calls.hpp"

#include <mpi.h>

#include <string_view>

#include <fmt/format.h>

#include "findings/findings.hpp"

namespace mpisentry::checks {

void call_failed(const CallRecord& call, int error) noexcept {
  if (!on(report::Check::CallFailed)) return;
  try {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    if (PMPI_Error_string(error, text, &length) != MPI_SUCCESS) length = 0;
    report::Finding finding;
    finding.check = report::Check::CallFailed;
    const std::string_view message(text, static_cast<std::size_t>(length));
    finding.summary.push_back(fmt::format("{} returned an error (code {}); MPI says:", function_info(call.function).name, error));
    // MPICH's strings carry an error stack, one line per level.
    for (std::size_t start = 0; start < message.size();) {
      const std::size_t end = std::min(message.find('\n', start), message.size());
      if (end > start) finding.summary.emplace_back("   " + std::string(message.substr(start, end - start)));
      start = end + 1;
    }
    if (length == 0) finding.summary.emplace_back("   (MPI has no text for this error code)");
    const std::string described = call_text(call);
    finding.parties.push_back({{world_rank()}, "made the call", described, {}});
    finding.key = fmt::format("{}|{}", described, message);
    report(std::move(finding), /*own_stack=*/true);
  } catch (...) {
    // A failed report must not turn the program's error into a crash.
  }
}

}  // namespace mpisentry::checks
