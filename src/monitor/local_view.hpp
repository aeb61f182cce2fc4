// This rank as its monitor sees it: its threads' call records sampled, the
// status of the last tick (blocked, polling, held outside MPI), its state as
// a snapshot for the others, the line a round tells of it, where its
// threads' stacks are, and the one notice of calls its thread level does not
// allow.
#pragma once

#include <mpi.h>

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "monitor/describe.hpp"
#include "monitor/ending.hpp"
#include "monitor/rounds.hpp"
#include "records/call_text.hpp"
#include "records/thread_state.hpp"
#include "model/snapshot.hpp"

namespace mpisentry::monitor {

class LocalView {
 public:
  // `program_thread_level`: the level the program was told it has;
  // `exit`: read for the exit status a snapshot carries.
  LocalView(int rank, int program_thread_level, const ExitNotice& exit)
      : program_thread_level_(program_thread_level), describer_(rank), exit_(exit) {}

  // Every live thread that has called MPI, with its state (through which a
  // waiting thread is asked), by thread id.
  struct Threads {
    std::vector<const ThreadState*> states;
    std::vector<ThreadState::Sample> samples;
  };
  static Threads sample_threads();

  // Each tick, on the monitor's thread: the rank's status, kept for
  // describe(); warns once of calls the thread level does not allow.
  LocalStatus observe();

  // This rank's state in a line, as a report prints it: each round tells
  // it to the neighbours, for a report of this rank's loss.
  std::string state_line(const LocalStatus& status) const;

  // This rank as the last tick observed it, every thread's call read now
  // (`ask_threads`: a waiting thread is asked which of its requests are
  // incomplete). From any thread.
  RankSnapshot describe(bool ask_threads) const;

  // Where each thread of the snapshot is, for a report: located here,
  // symbolized once for all ranks by rank 0 (stacks::serialize'd).
  std::vector<std::string> locate_stacks(const RankSnapshot& snapshot) const;

 private:
  static OutsideMpi look_outside(const std::vector<ThreadState::Sample>& samples, std::string* why = nullptr);
  void check_thread_level(const std::vector<ThreadState::Sample>& samples);

  int program_thread_level_;
  bool thread_level_noticed_ = false;
  Describer describer_;
  CallText call_text_;  // for state_line
  Observer observer_;
  const ExitNotice& exit_;
  mutable std::mutex status_mutex_;
  LocalStatus status_;
  std::unordered_map<int, double> thread_seconds_;  // by thread id, as of the last tick
};

}  // namespace mpisentry::monitor
