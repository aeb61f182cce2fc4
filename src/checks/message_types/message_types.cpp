#include "checks/message_types/message_types.hpp"

#include <string>

#include <fmt/format.h>

#include "trackers/message_channel.hpp"
#include "trackers/signature.hpp"

namespace mpisentry::checks {
namespace {

// The mismatches found under the channel's lock, reported after it.
KeptPairs& found = *new KeptPairs;  // never destroyed: wrappers may run during exit

void paired(const ShadowView& shadow, int source, const MessageRecord& sent, const std::string& sent_type,
            const TakenReceive& taken) {
  if (!comparable(sent, taken) || !taken.compare) return;
  // A receive that got all it asked for is hashed as a whole (one run of a
  // basic type then takes no walk): the same signature as cut to its bytes.
  const bool whole = taken.received_bytes == taken.type->size * taken.count;
  const Signature mine = signature_of(*taken.type, taken.count, whole ? -1 : taken.received_bytes);
  if (!mine.differs_from(sent.signature())) return;
  found.keep(shadow, source, sent, sent_type, taken);
}

void report_found() {
  found.report_each([](const KeptPair& m) {
    const TakenReceive& t = m.taken;
    const TypeInfo& receive_type = *t.type;
    const std::string receive_amount = amount_text(receive_type, t.count);
    const int me = world_rank();
    report::Finding finding;
    finding.check = report::Check::MessageDatatype;
    finding.summary = {
        fmt::format("The type signature of a message from rank {} to rank {} (tag {}, {}) differs between send and "
                    "receive:",
                    m.sender, me, m.sent.tag, m.comm),
        fmt::format("sent as {} x {} ({} B), received as {}.", m.sent.count, m.sent_type, m.sent.bytes,
                    t.received_bytes == receive_type.size * t.count
                        ? receive_amount
                        : fmt::format("the first {} B of {}", t.received_bytes, receive_amount))};
    const char* function = function_info(t.function).name;
    const std::string receive_call = fmt::format("{}(count={}, datatype={}, source={}, tag={}, comm={})", function,
                                                 t.count, receive_type.text, m.source, m.sent.tag, m.comm);
    add_receive_parties(finding, t, receive_call);
    finding.parties.push_back(
        {{m.sender}, "sent it", sent_call_text(m.sent, m.sent_type, me, m.comm), sender_stack(m.sent)});
    finding.key = fmt::format("datatype {} {} {} {} {}", function, receive_type.text, m.sent_type, m.sent.call_site,
                              m.sent.count);
    report(std::move(finding));
  });
}

}  // namespace

void start_message_types(const StartContext&) {
  if (on(report::Check::MessageDatatype)) listen_to_channel({.paired = paired, .after_lock = report_found});
}

}  // namespace mpisentry::checks
