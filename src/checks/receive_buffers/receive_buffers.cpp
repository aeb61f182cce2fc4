#include "checks/receive_buffers/receive_buffers.hpp"

#include <string>

#include <fmt/format.h>

#include "trackers/message_channel.hpp"

namespace mpisentry::checks {
namespace {

// Receive buffers found written under the channel's lock, reported after it.
KeptPairs& found = *new KeptPairs;  // never destroyed: wrappers may run during exit

void paired(const ShadowView& shadow, int source, const MessageRecord& sent, const std::string& sent_type,
            const TakenReceive& taken) {
  if (comparable(sent, taken) && taken.summed && (sent.flags & MessageRecord::kSummed) && taken.data_sum != sent.data_sum)
    found.keep(shadow, source, sent, sent_type, taken);
}

void report_found() {
  found.report_each([](const KeptPair& m) {
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
  });
}

}  // namespace

void start_receive_buffers(const StartContext&) {
  if (summing_sends()) listen_to_channel({.paired = paired, .after_lock = report_found});
}

}  // namespace mpisentry::checks
