#include "races/races.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "config/slow_paths.hpp"
#include "log/log.hpp"
#include "recording/rank_file.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::races {

namespace detail {
unsigned char mode = 0;
}  // namespace detail

using recording::Ending;
using recording::Header;
using recording::Recording;
using recording::Run;
using recording::Writer;

namespace {

// Guards everything below: taken by the program's threads at their
// recorded calls, by the monitor's tick and by the crash dump.
std::mutex mutex;
int world_rank = 0;

// Recording.
recording::RankFile file;
Writer writer;
// Where receives and probes from MPI_ANY_SOURCE were made, for the summary.
struct Place {
  Kind kind;
  std::uint64_t count = 0;
  std::uint64_t raced = 0;  // another sender's matching message was there when it completed
  std::set<int> sources;
};
std::map<const void*, Place> places;
// Watched nonblocking receives not yet complete, by handle.
std::unordered_map<MPI_Request, Watched> receives;
std::atomic<std::size_t> receives_pending{0};
// Alternatives: the latest receives and probes from MPI_ANY_SOURCE, each
// with the senders it took or was given as alternatives, so that the first
// message of each other sender that it matches and that a receive posted
// after it takes is named as one too.
struct Open {
  std::uint64_t number;
  std::uint64_t posted;
  int tag;
  MPI_Comm comm;
  std::vector<int> named;
};
constexpr std::size_t kOpenReceives = 64;
bool alternatives = false;
std::uint64_t posts = 0;
std::deque<Open> open_receives;
std::atomic<bool> watching{false};
// The tag and communicator of the row of MPI_Iprobe calls from
// MPI_ANY_SOURCE that found nothing, when the rank's last event is one of
// them: only the first of a row is opened.
struct PollRow {
  int tag;
  MPI_Comm comm;
};
std::optional<PollRow> nothing_row;

// Replaying.
std::string replay_path;
Recording replay;
std::size_t next_run = 0;      // the run the next event comes from
std::uint64_t used_of_run = 0;  // its events already replayed
std::uint64_t replayed_events = 0;
bool said_recording_ended = false;

std::string rank_file_name(int rank) { return fmt::format("rank-{}.record", rank); }

[[noreturn]] void stop(const std::string& message) {
  log::error("{}", message);
  log::wait_for_stderr_to_drain();
  PMPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);  // not reached: MPI_Abort ends the job
}

std::optional<Problem> start_recording(const std::string& dir, int world_size) {
  if (auto problem = file.create(dir, rank_file_name(world_rank), "the recording")) return Problem{dir, *problem};
  file.append(Writer::header_text({world_rank, world_size, command_line()}));
  detail::mode |= detail::kRecording;
  slow_paths::take(slow_paths::kRaces);
  return std::nullopt;
}

std::optional<Problem> start_replay(const std::string& dir, int world_size) {
  replay_path = dir + "/" + rank_file_name(world_rank);
  struct stat status {};
  if (::stat(dir.c_str(), &status) != 0 || !S_ISDIR(status.st_mode))
    return Problem{dir, "cannot replay: no such directory"};
  std::ifstream in(replay_path, std::ios::binary);
  if (!in)
    return Problem{replay_path, fmt::format("cannot replay: no such file; the recording in {} is not of a job of "
                                            "{} ranks",
                                            dir, world_size)};
  std::ostringstream text;
  text << in.rdbuf();
  try {
    replay = recording::parse(text.str());
  } catch (const std::invalid_argument& bad) {
    return Problem{replay_path, fmt::format("cannot replay: {}", bad.what())};
  }
  const Header& header = replay.header;
  if (header.rank != world_rank || header.ranks != world_size)
    return Problem{replay_path, fmt::format("cannot replay: recorded by rank {} of {} ranks; this is rank {} of {}",
                                            header.rank, header.ranks, world_rank, world_size)};
  if (const std::string command = command_line(); header.command != command)
    return Problem{replay_path, fmt::format("cannot replay: recorded running `{}`; this rank runs `{}`",
                                            header.command, command)};
  detail::mode |= detail::kReplaying;
  slow_paths::take(slow_paths::kRaces);
  return std::nullopt;
}

// What this rank recorded; nothing when it made no timing-dependent call.
void print_summary(std::uint64_t events) {
  if (events == 0) return;
  log::info("recorded {} outcomes of calls that depend on timing in {} ({} bytes)", events, file.path(), file.bytes());
  std::uint64_t total = 0;
  for (const auto& [site, place] : places) total += place.count;
  if (total == 0) return;
  log::info("  {} of them receives and probes from MPI_ANY_SOURCE, at {} places (where another sender's message "
            "was there too, they raced; most races are intended):",
            total, places.size());
  constexpr std::size_t kShown = 10;
  std::size_t shown = 0;
  for (const auto& [site, place] : places) {
    if (shown++ == kShown) {
      log::info("  and {} more places", places.size() - kShown);
      break;
    }
    log::info("  {}: {} {} from rank{} {}{}", stacks::place_text(site), place.count,
              place.kind == Kind::Probe ? "probes" : "receives", place.sources.size() > 1 ? "s" : "",
              fmt::join(place.sources, ", "),
              place.raced == 0 ? std::string()
                               : fmt::format("; {} raced: a message from another rank that it could have taken was "
                                             "already there when it completed",
                                             place.raced));
  }
}

// A receive or probe from MPI_ANY_SOURCE that just completed with
// `source`'s message raced with each other rank whose message that it
// matches is there now: nothing this rank did since it learnt which message
// it got can have caused that one, so with other timing it could have been
// taken instead. Each other rank is asked on its own (MPI would show the
// earliest message: a probe's own, or the same sender's next) up to
// kProbedRanks ranks; above that, only the earliest message.
constexpr int kProbedRanks = 64;

std::vector<int> raced_with(const Watched& receive, int source) {
  std::vector<int> senders;
  const auto probe = [&](int rank) {
    int found = 0;
    MPI_Status status;
    if (PMPI_Iprobe(rank, receive.tag, receive.comm, &found, &status) == MPI_SUCCESS && found &&
        status.MPI_SOURCE != source)
      senders.push_back(status.MPI_SOURCE);
  };
  int ranks = 0;
  int intercomm = 0;
  PMPI_Comm_test_inter(receive.comm, &intercomm);
  if (intercomm)
    PMPI_Comm_remote_size(receive.comm, &ranks);
  else
    PMPI_Comm_size(receive.comm, &ranks);
  if (ranks > kProbedRanks) {
    probe(MPI_ANY_SOURCE);
  } else {
    for (int rank = 0; rank < ranks; ++rank)
      if (rank != source) probe(rank);
  }
  return senders;
}

// With the lock held: a receive posted as `posted` took a message from
// `source` with `tag` on `comm`. Each open receive posted before it that
// matches the message and has not named `source` yet could have taken it
// (MPI gives a sender's messages to the receives in the order posted, so this
// one is the first it could take), unless the message was sent after
// (because of) that receive, which only a replay can tell (--explore tries).
void name_late_alternative(int source, int tag, MPI_Comm comm, std::uint64_t posted) {
  for (Open& open : open_receives) {
    if (open.posted >= posted || open.comm != comm || (open.tag != MPI_ANY_TAG && open.tag != tag) ||
        std::find(open.named.begin(), open.named.end(), source) != open.named.end())
      continue;
    open.named.push_back(source);
    writer.alternatives(open.number, {source});
  }
}

// With the lock held: `watched`, a receive or probe from MPI_ANY_SOURCE
// numbered and posted just now, is open for the alternatives of later
// receives (alternatives on).
void open_receive(const Watched& watched) {
  open_receives.push_back({watched.number, watched.posted, watched.tag, watched.comm, {}});
  if (open_receives.size() > kOpenReceives) open_receives.pop_front();
  watching.store(true, std::memory_order_relaxed);
}

// With the lock held, alternatives on: open receive or probe `watched` took
// or found a message from `source` with `tag`, and the senders of `raced`
// had a message there that it matches: they are its alternatives, and the
// message is a later one for the receives open before it.
void name_alternatives(const Watched& watched, int source, int tag, const std::vector<int>& raced) {
  name_late_alternative(source, tag, watched.comm, watched.posted);
  const auto own = std::find_if(open_receives.begin(), open_receives.end(),
                                [&](const Open& open) { return open.number == watched.number; });
  if (own == open_receives.end()) return;  // one of kOpenReceives later receives pushed it out
  std::vector<int> found;
  for (const int sender : raced)
    if (std::find(own->named.begin(), own->named.end(), sender) == own->named.end()) found.push_back(sender);
  writer.alternatives(watched.number, found);
  own->named.insert(own->named.end(), found.begin(), found.end());
  own->named.push_back(source);
}

// In the program's thread, once `receive` completed with a message from
// status.MPI_SOURCE.
void completed(const Watched& receive, const MPI_Status& status) {
  const int source = status.MPI_SOURCE;
  if (!receive.wildcard) {
    const std::lock_guard lock(mutex);
    name_late_alternative(source, status.MPI_TAG, receive.comm, receive.posted);
    return;
  }
  const std::vector<int> raced = raced_with(receive, source);
  const std::lock_guard lock(mutex);
  writer.fill(receive.number, source);
  Place& place = places.try_emplace(receive.call_site, Place{receive.kind, 0, 0, {}}).first->second;
  ++place.count;
  place.raced += !raced.empty();
  place.sources.insert(source);
  if (alternatives) name_alternatives(receive, source, status.MPI_TAG, raced);
}

bool cancelled(const MPI_Status& status) {
  int flag = 0;
  PMPI_Test_cancelled(&status, &flag);
  return flag != 0;
}

}  // namespace

bool watching_all() noexcept { return watching.load(std::memory_order_relaxed); }

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text)
    if (c == '\0' || c == '\n') c = ' ';
  return text;
}

std::optional<Problem> start(const Setup& setup) {
  world_rank = setup.world_rank;
  alternatives = setup.alternatives;
  if (setup.multiple_threads && world_rank == 0 && (!setup.record_dir.empty() || !setup.replay_dir.empty()))
    log::warn("the program runs at MPI_THREAD_MULTIPLE: the outcomes of a rank's threads are recorded in one "
              "order, and where threads race for their calls a replay may give one thread's outcome to another "
              "(it stops when the calls differ, and may end otherwise where they do not)");
  // Replay first: it reads its file before the recording may write one.
  if (!setup.replay_dir.empty())
    if (auto problem = start_replay(setup.replay_dir, setup.world_size)) return problem;
  if (!setup.record_dir.empty()) return start_recording(setup.record_dir, setup.world_size);
  return std::nullopt;
}

namespace {

// Writes the rest and `ending`, and closes the file; false if it was not open.
bool end_recording(Ending ending) {
  const std::lock_guard lock(mutex);
  if (!file.is_open()) return false;
  file.append(writer.take() + Writer::ending_text(ending));
  file.close();
  return true;
}

}  // namespace

void flush(Patience patience) {
  if (!recording()) return;
  // The crashed thread may hold the lock: never wait for it long.
  std::unique_lock lock(mutex, std::defer_lock);
  for (int tries = 0; !lock.try_lock(); ++tries) {
    if (patience == Patience::None || tries == 50) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (file.is_open() && !writer.empty()) file.append(writer.take());
}

void finish() {
  const unsigned char was = detail::mode;
  {
    const std::lock_guard lock(mutex);
    detail::mode = 0;
  }
  if ((was & detail::kReplaying) != 0 && next_run < replay.runs.size())
    log::error("replay of {}: the program reached MPI_Finalize with recorded events left, the next event {} `{}` "
               "({}): it ran otherwise than the recorded run",
               replay_path, replayed_events, event_text(replay.runs[next_run].event),
               calls_of(replay.runs[next_run].event.kind));
  if ((was & detail::kRecording) != 0 && end_recording(Ending::Finalized)) print_summary(writer.events());
}

std::optional<Event> replayed(Kind kind, FunctionId function) {
  std::unique_lock lock(mutex);
  if (!replaying()) return std::nullopt;  // MPI_Finalize began on another thread
  if (next_run == replay.runs.size()) {
    if (replay.ending == Ending::Finalized) {
      const std::uint64_t events = replayed_events;
      lock.unlock();
      diverged(function, fmt::format("the recorded run reached MPI_Finalize after {} events", events));
    }
    if (!said_recording_ended && replay.ending != Ending::Free) {
      said_recording_ended = true;
      log::warn("replay of {}: the recorded run ended after {} events (it hung, crashed or was stopped); {} and "
                "later calls run unforced",
                replay_path, replayed_events, function_info(function).name);
    }
    return std::nullopt;
  }
  const Run& run = replay.runs[next_run];
  if (run.event.kind != kind) {
    lock.unlock();
    diverged(function, fmt::format("the recording has `{}` ({})", event_text(run.event), calls_of(run.event.kind)));
  }
  ++replayed_events;
  if (++used_of_run == run.count) {
    ++next_run;
    used_of_run = 0;
  }
  return run.event;
}

void diverged(FunctionId function, const std::string& problem) {
  std::uint64_t event = 0;
  {
    const std::lock_guard lock(mutex);
    event = replayed_events;
  }
  // The run's own recording says so, for --explore (which tells a schedule
  // that cannot be followed from a failure).
  end_recording(Ending::Diverged);
  stop(fmt::format("replay of {} diverged at event {}: the program called {}, but {}: this run went otherwise than "
                   "the recorded one (other arguments, input or ranks?)",
                   replay_path, event, function_info(function).name, problem));
}

void record(const Event& event) {
  const std::lock_guard lock(mutex);
  writer.append(event);
  nothing_row.reset();
}

void polled(int asked, int tag, MPI_Comm comm, bool found, const MPI_Status& status) {
  const Event event{Kind::Poll, found ? status.MPI_SOURCE : kNothing, {}};
  if (!alternatives || asked != MPI_ANY_SOURCE) return record(event);
  Watched poll{Kind::Poll, true, 0, nullptr, tag, comm, 0};
  const std::vector<int> raced = found ? raced_with(poll, status.MPI_SOURCE) : std::vector<int>{};
  const std::lock_guard lock(mutex);
  poll.number = writer.append(event);
  // A row of polls that found nothing (a loop waiting for a message) is one
  // outcome to vary, at its first: finding a later message sooner.
  const bool in_row = !found && nothing_row && nothing_row->tag == tag && nothing_row->comm == comm;
  nothing_row.reset();
  if (!found) nothing_row = PollRow{tag, comm};
  if (in_row) return;
  poll.posted = posts++;
  open_receive(poll);
  if (found) name_alternatives(poll, status.MPI_SOURCE, status.MPI_TAG, raced);
}

void SourceOutcome::begin(const Watched& watched, FunctionId function, int& source, MPI_Status** status) {
  if (watched.wildcard && replaying())
    if (const std::optional<Event> event = replayed(watched.kind, function); event && event->value >= 0)
      source = event->value;
  // A probe from one source takes no message: nothing to watch.
  if (!recording() || (!watched.wildcard && watched.kind != Kind::Receive)) return;
  watched_ = watched;
  {
    const std::lock_guard lock(mutex);
    watched_.posted = posts++;
    if (watched.wildcard) {
      watched_.number = writer.append({watched.kind, kUnknown, {}});
      nothing_row.reset();
      if (alternatives) open_receive(watched_);
    }
  }
  numbered_ = true;
  if (status) {
    if (*status == MPI_STATUS_IGNORE) *status = &own_;
    status_ = *status;
  }
}

void SourceOutcome::received(int result) const {
  // A probe's status says nothing of cancelling (MPI_Probe leaves that bit as it was).
  if (result != MPI_SUCCESS || (watched_.kind == Kind::Receive && cancelled(*status_)) ||
      status_->MPI_SOURCE == MPI_PROC_NULL)
    return;
  completed(watched_, *status_);
}

void SourceOutcome::receive_started(MPI_Request request) const {
  const std::lock_guard lock(mutex);
  receives[request] = watched_;
  receives_pending.fetch_add(1, std::memory_order_relaxed);
}

void persistent_wildcard(int source) {
  static std::once_flag said;
  if (on() && source == MPI_ANY_SOURCE)
    std::call_once(said, [] {
      log::warn("MPI_Recv_init from MPI_ANY_SOURCE: the messages its starts take are neither recorded nor replayed, "
                "so a replay may take others there");
    });
}

namespace {
// The receives the thread's Wait or Test call holds, while it runs.
thread_local CompletingReceives* holding = nullptr;
}  // namespace

bool CompletingReceives::pending() { return receives_pending.load(std::memory_order_relaxed) != 0; }

void CompletingReceives::hold(int count, const MPI_Request* requests) {
  if (requests == nullptr) return;
  const std::lock_guard lock(mutex);
  for (int i = 0; i < count; ++i) {
    const auto found = receives.find(requests[i]);
    if (found == receives.end()) continue;
    held_.push_back({i, requests[i], found->second, false});
    receives.erase(found);
    receives_pending.fetch_sub(1, std::memory_order_relaxed);
  }
  if (!held_.empty()) holding = this;
}

void CompletingReceives::note_completed() {
  for (Held& held : held_) {
    if (held.completed) continue;
    int done = 0;
    MPI_Status status;
    if (PMPI_Request_get_status(held.request, &done, &status) == MPI_SUCCESS && done) completed(held.index, status);
  }
}

void note_completed_while_waiting() {
  if (holding != nullptr) holding->note_completed();
}

void CompletingReceives::completed(int index, const MPI_Status& status) {
  for (Held& held : held_) {
    if (held.index != index) continue;
    if (held.completed) return;
    held.completed = true;
    if (!cancelled(status) && status.MPI_SOURCE != MPI_PROC_NULL) races::completed(held.watched, status);
    return;
  }
}

void CompletingReceives::finish(bool call_succeeded) {
  if (held_.empty()) return;
  holding = nullptr;
  const std::lock_guard lock(mutex);
  for (const Held& held : held_) {
    if (held.completed || !call_succeeded) continue;
    receives[held.request] = held.watched;
    receives_pending.fetch_add(1, std::memory_order_relaxed);
  }
  held_.clear();
}

}  // namespace mpisentry::races
