// The report sink: its order, its lock, and the ranks' dump handshake.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "report/sink.hpp"

using namespace mpisentry::report;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// A fresh folder under /tmp, removed with everything in it.
struct Folder {
  std::string path;
  Folder() {
    char name[] = "/tmp/mpisentry-sink-XXXXXX";
    REQUIRE(mkdtemp(name) != nullptr);
    path = name;
  }
  ~Folder() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& name) const { return path + '/' + name; }
};

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A setup whose stderr is a file of the folder.
SinkSetup setup_in(const Folder& folder, int rank = 0, int ranks = 1) {
  SinkSetup setup;
  setup.report_file = folder / "report.txt";
  setup.json = folder / "report.json";
  setup.dot = folder / "graph.dot";
  setup.html = folder / "report.html";
  setup.rank = rank;
  setup.ranks = ranks;
  setup.job = "unit";
  setup.stderr_fd = ::open((folder / "stderr.txt").c_str(), O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
  REQUIRE(setup.stderr_fd >= 0);
  return setup;
}

}  // namespace

TEST_CASE("the sink writes the report file first, then stderr, then JSON and DOT, and the page after them", "[sink]") {
  Folder folder;
  std::vector<std::string> steps;
  SinkSetup setup = setup_in(folder);
  setup.trace = [&steps](std::string_view step) { steps.emplace_back(step); };
  Sink sink(setup);
  CHECK(sink.write("first report\n", "{\"json\": 1}", "digraph {}"));
  sink.write_page("<p>1</p>");
  CHECK(steps == std::vector<std::string>{"file", "stderr", "json", "dot", "html"});
  CHECK(sink.write("second report\n", "{\"json\": 2}", "digraph {2}"));
  sink.write_page("<p>2</p>");
  CHECK(contents(folder / "report.txt") == "first report\nsecond report\n");  // appended
  CHECK(contents(folder / "stderr.txt") == "first report\nsecond report\n");
  CHECK(contents(folder / "report.json") == "{\"json\": 2}");  // replaced
  CHECK(contents(folder / "graph.dot") == "digraph {2}");
  CHECK(contents(folder / "report.html") == "<p>2</p>");

  steps.clear();
  CHECK(sink.write("a finding\n"));  // no JSON, no DOT
  CHECK(steps == std::vector<std::string>{"file", "stderr"});
}

TEST_CASE("a report the file cannot take still reaches stderr, and the sink says it failed", "[sink]") {
  Folder folder;
  SinkSetup setup = setup_in(folder);
  setup.report_file = folder / "no/such/folder/report.txt";
  Sink sink(setup);
  CHECK_FALSE(sink.write("the report\n"));
  CHECK(contents(folder / "stderr.txt") == "the report\n");
}

TEST_CASE("a report from within a report on the same thread is written, not waited for", "[sink]") {
  Folder folder;
  SinkSetup setup = setup_in(folder);
  Sink* self = nullptr;
  bool nested = false;
  setup.trace = [&](std::string_view step) {
    if (step == "file" && !nested) {
      nested = true;
      self->write("inner\n");  // would deadlock on a plain mutex
    }
  };
  Sink sink(setup);
  self = &sink;
  const auto started = Clock::now();
  CHECK(sink.write("outer\n"));
  CHECK(Clock::now() - started < Sink::kLockWait);  // not even the lock's timeout
  CHECK(contents(folder / "report.txt") == "outer\ninner\n");
}

TEST_CASE("reports of two threads never interleave, and a holder that stops does not stop the others", "[sink]") {
  Folder folder;
  SinkSetup setup = setup_in(folder);
  std::atomic<bool> holding{false}, release{false};
  std::atomic<std::thread::id> stopping{};
  setup.trace = [&](std::string_view step) {
    if (step != "stderr" || release.load() || std::this_thread::get_id() != stopping.load()) return;
    holding.store(true);
    // The first report stops here, its lock held, as a thread stopped by a crash would.
    while (!release.load()) std::this_thread::sleep_for(1ms);
  };
  Sink sink(setup);
  std::thread stopped([&] {
    while (stopping.load() != std::this_thread::get_id()) std::this_thread::sleep_for(1ms);
    sink.write("held\n");
  });
  stopping.store(stopped.get_id());
  while (!holding.load()) std::this_thread::sleep_for(1ms);

  const auto started = Clock::now();
  std::thread other([&] { sink.write("other\n"); });
  std::this_thread::sleep_for(Sink::kLockWait / 2);
  // Waiting for the lock: nothing written yet.
  CHECK(contents(folder / "report.txt") == "held\n");
  other.join();  // released by the lock's timeout
  const auto waited = Clock::now() - started;
  CHECK(waited >= Sink::kLockWait);
  CHECK(waited < Sink::kLockWait * 4);
  CHECK(contents(folder / "report.txt") == "held\nother\n");
  release.store(true);
  stopped.join();
}

TEST_CASE("the dump handshake counts each rank's mark, and the last rank out removes it", "[sink]") {
  Folder folder;
  constexpr int kRanks = 3;
  std::vector<std::unique_ptr<Sink>> ranks;
  for (int rank = 0; rank < kRanks; ++rank) ranks.push_back(std::make_unique<Sink>(setup_in(folder, rank, kRanks)));
  const std::string handshake = folder / "report.txt.dumps";
  CHECK(ranks[0]->handshake_folder() == handshake);

  CHECK(ranks[0]->dumps_done() == 0);
  ranks[0]->write_rank_dump("[0] dump\n", "{}");
  ranks[2]->write_rank_dump("[2] dump\n", "{}");
  CHECK(ranks[1]->dumps_done() == 2);
  // The per-rank JSON beside the job's.
  CHECK(contents(folder / "report.rank2.json") == "{}");

  // Rank 1 has not written: the others wait until the deadline, not longer.
  auto started = Clock::now();
  CHECK(ranks[0]->wait_for_dumps(Clock::now() + 200ms) == 2);
  CHECK(Clock::now() - started >= 200ms);

  std::thread late([&] {
    std::this_thread::sleep_for(100ms);
    ranks[1]->write_rank_dump("[1] dump\n", "{}");
  });
  started = Clock::now();
  CHECK(ranks[2]->wait_for_dumps(Clock::now() + 10s) == kRanks);
  CHECK(Clock::now() - started < 5s);
  late.join();
  CHECK(std::filesystem::exists(handshake));  // rank 1 still to leave
  CHECK(ranks[1]->wait_for_dumps(Clock::now() + 10s) == kRanks);
  CHECK_FALSE(std::filesystem::exists(handshake));
  // The report itself was never read back: three dumps, each once.
  const std::string report = contents(folder / "report.txt");
  CHECK(report.find("[0] dump\n") != std::string::npos);
  CHECK(report.find("[1] dump\n") != std::string::npos);
  CHECK(report.find("[2] dump\n") != std::string::npos);
}

TEST_CASE("a crash marks its dump only where ranks wait, and leaves no handshake behind", "[sink]") {
  Folder folder;
  Sink crashed(setup_in(folder, 1, 2));
  crashed.write_rank_dump("[1] crash\n", "", /*will_wait=*/false);
  CHECK_FALSE(std::filesystem::exists(crashed.handshake_folder()));

  Sink waiting(setup_in(folder, 0, 2));
  waiting.write_rank_dump("[0] dump\n", "");
  crashed.write_rank_dump("[1] crash\n", "", /*will_wait=*/false);
  CHECK(waiting.wait_for_dumps(Clock::now() + 10s) == 2);
  CHECK_FALSE(std::filesystem::exists(waiting.handshake_folder()));
}

TEST_CASE("the handshake is next to a regular report file, else in a folder of the job under TMPDIR", "[sink]") {
  Folder folder;
  CHECK(handshake_folder(folder / "report.txt", "job1") == folder / "report.txt.dumps");
  const char* previous = getenv("TMPDIR");
  const std::string kept = previous ? previous : "";
  setenv("TMPDIR", folder.path.c_str(), 1);
  CHECK(handshake_folder("/dev/null", "job1") == folder / "mpisentry-job1.dumps");
  CHECK(handshake_folder(folder / "no/such/folder/report.txt", "job2") == folder / "mpisentry-job2.dumps");
  unsetenv("TMPDIR");
  CHECK(handshake_folder("/dev/null", "job1") == "/tmp/mpisentry-job1.dumps");
  if (previous) setenv("TMPDIR", kept.c_str(), 1);

  // A rank whose report goes to a terminal or pipe still finds the others' marks.
  setenv("TMPDIR", folder.path.c_str(), 1);
  SinkSetup setup = setup_in(folder, 0, 1);
  setup.report_file = "/dev/null";
  Sink sink(setup);
  if (previous) setenv("TMPDIR", kept.c_str(), 1); else unsetenv("TMPDIR");
  sink.write_rank_dump("[0] dump\n", "");
  CHECK(sink.dumps_done() == 1);
  CHECK(sink.wait_for_dumps(Clock::now() + 1s) == 1);
  CHECK_FALSE(std::filesystem::exists(folder / "mpisentry-unit.dumps"));
}

TEST_CASE("per_rank_path puts .rankN before the extension", "[sink]") {
  CHECK(per_rank_path("report.json", 3) == "report.rank3.json");
  CHECK(per_rank_path("/a.b/report", 0) == "/a.b/report.rank0");
  CHECK(per_rank_path("/a/.json", 1) == "/a/.json.rank1");
}
