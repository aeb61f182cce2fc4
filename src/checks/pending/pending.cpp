#include "checks/pending/pending.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "log/log.hpp"
#include "trackers/message_channel.hpp"

namespace mpisentry::checks {
namespace {

struct PendingMessage {
  int source = 0;  // world rank
  int dest = 0;    // this rank in the message's communicator
  std::string comm;
  MessageRecord record;
  std::string type;
};

struct PendingState {
  int max_pending = 20;  // CHECK-MAX-PENDING
  // Since the last drained(); the channel calls both where no other thread
  // calls MPI.
  std::vector<PendingMessage> pending;
};

PendingState& pending_state() {
  static PendingState* const instance = new PendingState;  // never destroyed: wrappers may run during exit
  return *instance;
}

void unreceived(const ShadowView& shadow, int source, const MessageRecord& record, const std::string& type,
                bool maybe_taken) {
  if (maybe_taken) return;
  pending_state().pending.push_back({world_rank_of(shadow.peers, source), shadow.rank, shadow.name, record, type});
}

// One report of the messages sent to this rank on `where` and never
// received; `missing` of them did not even arrive.
void drained(std::int64_t missing, const std::string& where, const char* when) {
  PendingState& s = pending_state();
  std::vector<PendingMessage> pending;
  pending.swap(s.pending);
  const std::int64_t count = static_cast<std::int64_t>(pending.size()) + missing;
  if (count == 0) return;
  if (count_of_messages_lost()) {
    log::debug("{} message(s) on {} look pending at {}, but a receive failed earlier: not reported", count, where,
               when);
    return;
  }
  // In the order each sender sent them.
  std::stable_sort(pending.begin(), pending.end(), [](const PendingMessage& a, const PendingMessage& b) {
    return std::tie(a.source, a.record.number) < std::tie(b.source, b.record.number);
  });
  report::Finding finding;
  finding.check = report::Check::MessagePending;
  const int me = world_rank();
  finding.summary.push_back(fmt::format("{} message{} sent to rank {} on {} and never received before {}:", count,
                                        count == 1 ? " was" : "s were", me, where, when));
  if (missing > 0)
    finding.summary.push_back(fmt::format("({} of them did not arrive within {} s)", missing,
                                          std::chrono::seconds(kDrainLimit).count()));
  finding.parties.push_back({{me}, fmt::format("calls {}", when), "", {}});
  std::size_t listed = 0;
  for (const PendingMessage& message : pending) {
    if (listed == static_cast<std::size_t>(s.max_pending)) {
      finding.summary.push_back(fmt::format("... and {} more, not listed (CHECK-MAX-PENDING {})",
                                            pending.size() - listed, s.max_pending));
      break;
    }
    ++listed;
    const MessageRecord& r = message.record;
    finding.summary.push_back(fmt::format("message {}: from rank {}, tag {}, {}, {} B ({} x {}), sent by {}", listed,
                                          message.source, r.tag, message.comm, r.bytes, r.count, message.type,
                                          function_info(static_cast<FunctionId>(r.function)).name));
    finding.parties.push_back({{message.source},
                               fmt::format("sent message {}", listed),
                               sent_call_text(r, message.type, message.dest, message.comm),
                               sender_stack(r)});
  }
  finding.key = fmt::format("pending {} {}", where, pending.empty() ? 0 : pending.front().record.call_site);
  report(std::move(finding), /*own_stack=*/true);
}

}  // namespace

void start_pending(const StartContext& context) {
  if (!on(report::Check::MessagePending)) return;
  pending_state().max_pending = context.settings.max_pending;
  listen_to_channel({.unreceived = unreceived, .drained = drained});
}

}  // namespace mpisentry::checks
