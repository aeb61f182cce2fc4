#include "checks/collectives/match.hpp"

#include "trackers/signature.hpp"

namespace mpisentry::checks {
namespace {

void count(std::vector<Mismatch>& found, report::Check check, int peer) {
  for (Mismatch& mismatch : found)
    if (mismatch.check == check) {
      ++mismatch.peers;
      return;
    }
  found.push_back({check, peer, 1});
}

Signature signature(const Amount& amount) {
  Signature sig;
  sig.bytes = amount.bytes;
  sig.hash = amount.hash;
  sig.untyped = amount.untyped != 0;
  sig.known = amount.known != 0;
  return sig;
}

bool same_call(const CollectiveRecord& a, const CollectiveRecord& b) {
  return a.kind == b.kind && a.kind_only == b.kind_only && (a.kind_only || !a.rooted || a.root == b.root);
}

}  // namespace

std::vector<Mismatch> compare_calls(const CollectiveRecord& mine, const std::vector<CollectiveRecord>& from) {
  std::vector<Mismatch> found;
  for (int i = 0; i < static_cast<int>(from.size()); ++i) {
    const CollectiveRecord& other = from[static_cast<std::size_t>(i)];
    if (other.kind != mine.kind) {
      count(found, mine.frees || other.frees ? report::Check::CommFreeMismatch : report::Check::CollectiveOperation,
            i);
      continue;
    }
    if (mine.kind_only || other.kind_only) continue;
    if (mine.rooted && other.rooted && mine.root != other.root) count(found, report::Check::CollectiveRoot, i);
    if (mine.op >= 0 && other.op >= 0 && mine.op != other.op) count(found, report::Check::CollectiveReduction, i);
  }
  return found;
}

std::vector<Mismatch> compare_data(const std::vector<CollectiveRecord>& mine,
                                   const std::vector<CollectiveRecord>& from) {
  std::vector<Mismatch> found;
  if (mine.size() != from.size() || mine.empty()) return found;
  for (const CollectiveRecord& other : from)
    if (!same_call(mine.front(), other) || mine.front().kind_only) return found;
  for (int i = 0; i < static_cast<int>(from.size()); ++i) {
    const Amount& sent = from[static_cast<std::size_t>(i)].sent;
    const Amount& expected = mine[static_cast<std::size_t>(i)].expected;
    if (!sent.present || !expected.present || !sent.known || !expected.known) continue;
    if (sent.bytes != expected.bytes)
      count(found, report::Check::CollectiveSize, i);
    else if (signature(sent).differs_from(signature(expected)))
      count(found, report::Check::CollectiveDatatype, i);
  }
  return found;
}

}  // namespace mpisentry::checks
