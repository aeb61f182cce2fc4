#include "checks/receive_buffers/receive_buffers.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "trackers/message_channel.hpp"

namespace mpisentry::checks {
namespace {

// A receive buffer found written under the channel's lock, reported after it.
struct Modified {
  TakenReceive taken;
  MessageRecord sent;
  std::string sent_type;
  int sender = 0;  // world rank
  int source = 0;  // comm rank
  std::string comm;
};

// Filled under the channel's lock, emptied after it; never at
// MPI_THREAD_MULTIPLE (summing_sends is off there), so no lock of its own.
std::vector<Modified>& found() {
  static auto* const instance = new std::vector<Modified>;  // never destroyed: wrappers may run during exit
  return *instance;
}

void paired(const ShadowView& shadow, int source, const MessageRecord& sent, const std::string& sent_type,
            const TakenReceive& taken) {
  if (sent.flags & MessageRecord::kMultipleThreads) return;
  if (taken.received_bytes != sent.bytes) return;  // truncation: MPI's own error
  if (taken.summed && (sent.flags & MessageRecord::kSummed) && taken.data_sum != sent.data_sum)
    found().push_back({taken, sent, sent_type, world_rank_of(shadow.peers, source), source, shadow.name});
}

void report_found() {
  if (found().empty()) return;
  std::vector<Modified> modified;
  modified.swap(found());
  for (const Modified& m : modified) {
    const TakenReceive& t = m.taken;
    const int me = world_rank();
    const char* function = function_info(t.function).name;
    report::Finding finding;
    finding.check = report::Check::MemoryIllegalModification;
    finding.summary = {
        fmt::format("The receive buffer of {} was written while MPI owned it: the {} B it holds when the receive "
                    "completed differ from the bytes rank {} sent (tag {}, {}).",
                    function, t.received_bytes, m.sender, m.sent.tag, m.comm),
        "MPI owns a receive buffer from the call that starts the receive until the call that completes it returns; "
        "the program may neither read nor write it. (If the sender reports its send buffer written while its send "
        "was pending, that write may be the cause instead.)"};
    add_receive_parties(finding, t,
                        fmt::format("{}(buf={}, count={}, datatype={}, source={}, tag={}, comm={})", function,
                                    t.buffer, t.count, t.type->text, m.source, m.sent.tag, m.comm));
    finding.parties.push_back(
        {{m.sender}, "sent it", sent_call_text(m.sent, m.sent_type, me, m.comm), sender_stack(m.sent)});
    finding.key = fmt::format("modified receive {} {}", t.posted_at, m.sent.call_site);
    report(std::move(finding));
  }
}

}  // namespace

void start_receive_buffers(const StartContext&) {
  if (summing_sends()) listen_to_channel({.paired = paired, .after_lock = report_found});
}

}  // namespace mpisentry::checks
