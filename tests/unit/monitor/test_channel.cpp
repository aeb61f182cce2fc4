// The monitors' tree and the endpoints a parent gives its children; the
// connections themselves are tested by real jobs (tests/channel, tests/multihost).
#include <catch2/catch.hpp>

#include <set>

#include "monitor/channel.hpp"

using namespace mpisentry::monitor;

TEST_CASE("tree_links: a binomial tree: one parent each, and no rank deeper or with more links than log2 of the ranks",
          "[channel]") {
  for (const int ranks : {1, 2, 3, 8, 9, 10, 73, 1000, 100000}) {
    INFO(ranks << " ranks");
    int log2_ranks = 0;
    while ((1L << log2_ranks) < ranks) ++log2_ranks;
    std::multiset<int> as_child;
    int deepest = 0;
    std::size_t most_links = 0;
    for (int rank = 0; rank < ranks; ++rank) {
      const TreeLinks links = tree_links(rank, ranks);
      for (int child : links.children) {
        CHECK(tree_links(child, ranks).parent == rank);
        as_child.insert(child);
      }
      most_links = std::max(most_links, links.children.size() + (rank == 0 ? 0 : 1));
      if (rank == 0) {
        CHECK(links.parent == -1);
        continue;
      }
      CHECK(links.parent < rank);
      int depth = 0;
      for (int up = rank; up != 0; up = tree_links(up, ranks).parent) ++depth;
      deepest = std::max(deepest, depth);
    }
    // Each rank but 0 is exactly one rank's child.
    CHECK(as_child.size() == static_cast<std::size_t>(ranks - 1));
    CHECK(std::set<int>(as_child.begin(), as_child.end()).size() == as_child.size());
    CHECK(deepest <= log2_ranks);
    CHECK(most_links == static_cast<std::size_t>(log2_ranks));
  }
  CHECK(tree_links(0, 10).children == std::vector<int>{1, 2, 4, 8});
  CHECK(tree_links(8, 10).children == std::vector<int>{9});
  CHECK(tree_links(6, 10).children == std::vector<int>{7});
  CHECK(tree_links(6, 10).parent == 4);
  CHECK(tree_links(9, 10).parent == 8);
}

TEST_CASE("endpoints: what a parent sends reads back the same, and a bad text is refused", "[channel]") {
  Endpoint endpoint;
  endpoint.host = "node1";
  endpoint.host_key = "node1|net:[4026531840]";
  endpoint.port = 40001;
  endpoint.addresses = {0x0a4d0001, 0x7f000001};
  endpoint.token = 0xfedcba9876543210ull;
  endpoint.pid = 4101;
  const Endpoint back = decode_endpoint(encode(endpoint));
  CHECK(back.host == endpoint.host);
  CHECK(back.host_key == endpoint.host_key);
  CHECK(back.port == endpoint.port);
  CHECK(back.addresses == endpoint.addresses);
  CHECK(back.token == endpoint.token);
  CHECK(back.pid == endpoint.pid);
  CHECK(back.error.empty());

  Endpoint failed;
  failed.error = "cannot listen on any port of MONITOR-PORTS 40000: Address already in use";
  CHECK(decode_endpoint(encode(failed)).error == failed.error);

  CHECK_THROWS_AS(decode_endpoint("port forty\n"), std::invalid_argument);
  CHECK_THROWS_AS(decode_endpoint("colour blue\n"), std::invalid_argument);
  CHECK_THROWS_AS(decode_endpoint("port 1"), std::invalid_argument);
}

TEST_CASE("connect_order: loopback first on the parent's own network stack, last elsewhere", "[channel]") {
  Endpoint parent;
  parent.addresses = {0x0a4d0001, 0xc0a80105, 0x7f000001};
  CHECK(connect_order(parent, /*same_stack=*/false) == std::vector<std::uint32_t>{0x0a4d0001, 0xc0a80105, 0x7f000001});
  CHECK(connect_order(parent, /*same_stack=*/true) == std::vector<std::uint32_t>{0x7f000001, 0x0a4d0001, 0xc0a80105});
  CHECK(address_text(0x0a4d0001, 40001) == "10.77.0.1:40001");
}

TEST_CASE("frames: pulses, data and lost-rank news read back whole, a part waits for the rest", "[channel]") {
  std::string inbox = frame(FrameKind::Pulse, {}) + frame(FrameKind::Data, "round") + frame(FrameKind::Lost, "x");
  const std::string whole = inbox;
  inbox.pop_back();  // the last frame's last byte has not come yet
  std::vector<Frame> frames = take_frames(inbox);
  REQUIRE(frames.size() == 2);
  CHECK(frames[0].kind == FrameKind::Pulse);
  CHECK(frames[0].bytes.empty());
  CHECK(frames[1].kind == FrameKind::Data);
  CHECK(frames[1].bytes == "round");
  inbox += whole.back();
  frames = take_frames(inbox);
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].kind == FrameKind::Lost);
  CHECK(frames[0].bytes == "x");
  CHECK(inbox.empty());

  std::string out_of_step = "\x07" + std::string(4, '\0');
  CHECK_THROWS_AS(take_frames(out_of_step), std::invalid_argument);
}

TEST_CASE("lost ranks: what a rank tells of a lost one reads back the same, and a cut message is refused",
          "[channel]") {
  LostRank lost;
  lost.rank = 4;
  lost.host = "node2";
  lost.pid = 31337;
  lost.how = LostRank::How::Silent;
  lost.signal_number = 0;
  lost.at_ms = 1'800'000'000'123;
  lost.last_state = "blocked for 2.5 s in MPI_Recv(source=1)";
  lost.state_age_seconds = 0.25;
  lost.noticed_by = 5;
  const LostRank back = decode_lost_rank(encode(lost));
  CHECK(back.rank == lost.rank);
  CHECK(back.host == lost.host);
  CHECK(back.pid == lost.pid);
  CHECK(back.how == lost.how);
  CHECK(back.at_ms == lost.at_ms);
  CHECK(back.last_state == lost.last_state);
  CHECK(back.state_age_seconds == Approx(0.25));
  CHECK(back.noticed_by == 5);

  const std::string bytes = encode(lost);
  CHECK_THROWS_AS(decode_lost_rank(bytes.substr(0, bytes.size() - 1)), std::invalid_argument);
  CHECK_THROWS_AS(decode_lost_rank(bytes + "x"), std::invalid_argument);
}
