// The start-up handshake's decisions: its fixed first exchange, and what a
// rank says when it is the first with something wrong or when others never
// joined.
#include <catch2/catch.hpp>

#include "monitor/handshake.hpp"

using namespace mpisentry;
using namespace mpisentry::monitor::handshake;

namespace {

const Place kNode2{3, "node2"};
const Identity kOld{"0.1.0", "/old/lib/libmpisentry.so"};
const Identity kNew{"0.2.0", "/new/lib/libmpisentry.so"};

}  // namespace

TEST_CASE("handshake: the identity block carries version and path, cut to their room", "[handshake]") {
  CHECK(decode(encode(kOld)).version == kOld.version);
  CHECK(decode(encode(kOld)).path == kOld.path);
  const Identity long_one{std::string(100, 'v'), std::string(5000, 'p')};
  const Identity cut = decode(encode(long_one));
  CHECK(cut.version == std::string(kVersionBytes, 'v'));
  CHECK(cut.path == std::string(kIdentityBytes - kVersionBytes, 'p'));
}

TEST_CASE("handshake: a rank with rank 0's version and good settings has nothing to say", "[handshake]") {
  CHECK(problems(kNode2, kOld, kOld, {}).empty());
  // A path cut in the block is no difference.
  const Identity long_path{"0.1.0", std::string(5000, 'p')};
  CHECK(problems(kNode2, long_path, decode(encode(long_path)), {}).empty());
}

TEST_CASE("handshake: another version names both versions, files, the rank and its host", "[handshake]") {
  const std::vector<std::string> lines = problems(kNode2, kOld, kNew, {});
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] ==
        "rank 3 (host node2) runs mpisentry 0.1.0 (from /old/lib/libmpisentry.so), rank 0 runs 0.2.0 "
        "(from /new/lib/libmpisentry.so): every rank must preload the same mpisentry");
  CHECK(lines[1] == "every rank stops before the program starts, with exit status 2");
}

TEST_CASE("handshake: bad settings are each named with the rank and its host", "[handshake]") {
  const std::vector<config::Problem> errors{{"/x/y.conf", "cannot read config file: No such file or directory"},
                                            {"MPISENTRY_VERBOSE", "\"x\" is not a number"}};
  const std::vector<std::string> lines = problems(kNode2, kOld, kOld, errors);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "rank 3 (host node2): /x/y.conf: cannot read config file: No such file or directory");
  CHECK(lines[1] == "rank 3 (host node2): MPISENTRY_VERBOSE: \"x\" is not a number");
  CHECK(lines[2] == "bad configuration: every rank stops before the program starts, with exit status 2");
}

TEST_CASE("handshake: ranks that never joined are said with the bound and the likely causes", "[handshake]") {
  const std::vector<std::string> lines = unanswered(kNode2, std::chrono::seconds(3));
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "rank 3 (host node2): the checker in some ranks did not answer in MPI_Init within 3s "
                    "(DEADLOCK-TIMEOUT)");
  CHECK(lines[1].find("\"cannot be preloaded\"") != std::string::npos);
  CHECK(lines[1].find("LD_PRELOAD") != std::string::npos);
  CHECK(lines[2] == "ending the job with MPI_Abort, exit status 2");
}
