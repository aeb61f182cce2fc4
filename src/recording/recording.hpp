// The recording of one rank's run: the outcome of each of its MPI calls
// whose outcome depends on timing, in the order the rank made them, so that
// a replay can force every one. A text file, one event a line, written as
// the run goes:
//
//   mpisentry-record 2                the format and its version
//   rank 0 of 4                       MPI_COMM_WORLD rank and size
//   command ./solver -n 10            the rank's command line, to compare
//   R 3                               a receive from MPI_ANY_SOURCE took a message from rank 3
//   R ?                               ... whose source was not known yet (see "=")
//   = 5 2                             event 5 (counted from 0), an R or P ?, had rank 2's
//   P 1                               MPI_Probe or MPI_Mprobe from MPI_ANY_SOURCE found rank 1's
//   I -                               MPI_Iprobe or MPI_Improbe found nothing ...
//   I 2 *40                           ... or rank 2's; "*N": N events the same in a row
//   T -   T +                         MPI_Test, Testall, Request_get_status: incomplete, complete
//   A -   A u   A 2                   MPI_Testany, Waitany: nothing, no active request, index 2
//   S -   S u   S 0,3                 MPI_Testsome, Waitsome: nothing, no active request, indices
//   ~ 5 1,3                           event 5, an R, P or I, could have taken (found) rank
//                                     1's or rank 3's message instead (the alternatives
//                                     --explore tries)
//   end                               the rank reached MPI_Finalize, or:
//   free                              a schedule of --explore: the rest runs unforced
//   diverged                          the replay this run made stopped: its calls differed
//
// Sources are ranks of the call's communicator, indices those of the call's
// array. A file without a last line of its own is the recording of a run that
// ended early (a hang, a crash, an abort): a replay forces what it has and
// lets the rest run.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mpisentry::recording {

inline constexpr int kFormatVersion = 2;

// What kind of call an event is the outcome of: its letter in the file.
enum class Kind : char {
  Receive = 'R',  // a receive from MPI_ANY_SOURCE: the source of its message
  Probe = 'P',    // MPI_Probe, MPI_Mprobe from MPI_ANY_SOURCE: the source found
  Poll = 'I',     // MPI_Iprobe, MPI_Improbe: nothing, or the source found
  Test = 'T',     // MPI_Test, MPI_Testall, MPI_Request_get_status: incomplete or complete
  Any = 'A',      // MPI_Testany, MPI_Waitany: nothing, none active, or the index
  Some = 'S',     // MPI_Testsome, MPI_Waitsome: nothing, none active, or the indices
};

// The calls an event of `kind` comes from, for messages.
std::string_view calls_of(Kind kind);

// An event's value besides a source, an index or Test's 1.
inline constexpr int kNothing = -1;    // the call found nothing complete
inline constexpr int kUndefined = -2;  // MPI_UNDEFINED: the call had no active request
inline constexpr int kUnknown = -3;    // a receive or probe whose source is not known (it never completed)

struct Event {
  Kind kind = Kind::Receive;
  int value = kUnknown;      // Some: the number of indices, when any
  std::vector<int> indices;  // Some only
  bool operator==(const Event&) const = default;
};

struct Header {
  int rank = 0;
  int ranks = 0;
  std::string command;
  bool operator==(const Header&) const = default;
};

// The events as the writer holds them: each with how often it came in a row.
struct Run {
  Event event;
  std::uint64_t count = 1;
};

// How a recording ends: its last line.
enum class Ending {
  Cut,        // none: the run hung, crashed or was stopped
  Finalized,  // "end"
  Free,       // "free": a schedule; the rest of the run is unforced
  Diverged,   // "diverged": the run's replay stopped
};

// Builds the text; the caller writes what take() returns and may go on.
// Consecutive equal events share a line unless a line was taken between them.
class Writer {
 public:
  static std::string header_text(const Header& header);
  // The last line of an ending (empty for Cut).
  static std::string ending_text(Ending ending);

  // Appends `event`; returns its number (events are counted from 0).
  std::uint64_t append(const Event& event);
  // Event `number`, a Receive or Probe appended with kUnknown, found
  // `source`: set in place while not yet taken, else written as a "=" line.
  void fill(std::uint64_t number, int source);
  // Event `number`, a Receive, Probe or Poll, could have taken (found) these senders' messages.
  void alternatives(std::uint64_t number, const std::vector<int>& sources);
  // The lines not yet taken.
  std::string take();
  bool empty() const { return lines_.empty() && fills_.empty() && alternatives_.empty(); }
  std::uint64_t events() const { return events_; }

 private:
  struct Line {
    Run run;
    std::uint64_t first = 0;  // the number of its (first) event
  };
  struct Fill {
    std::uint64_t number;
    int source;
  };
  std::vector<Line> lines_;  // by first
  std::vector<Fill> fills_;  // of events already taken
  std::vector<std::pair<std::uint64_t, std::vector<int>>> alternatives_;
  std::uint64_t events_ = 0;
};

// A recording read back: the header, the events in order (a Receive or
// Probe never filled keeps kUnknown), the other senders each of them could
// have taken (by event number, in the order found), and how it ended.
struct Recording {
  Header header;
  std::vector<Run> runs;
  std::map<std::uint64_t, std::vector<int>> alternatives;
  Ending ending = Ending::Cut;
  // Every event, one a repeat of a run.
  std::vector<Event> events() const;
  std::uint64_t event_count() const;
};

// Parses a recording's text; throws std::invalid_argument naming the line
// and what is wrong with it. A last line without its newline (the run was
// cut while writing it) is dropped.
Recording parse(std::string_view text);

// One event's line without its newline, e.g. "S 0,3" (for messages).
std::string event_text(const Event& event);

}  // namespace mpisentry::recording
