// The runs the launcher makes of a job itself: --explore's, and the run of
// `mpisentry analyze` that confirms a deadlock. Each run is a child in the
// launcher's process group under a time limit, with its files (output,
// reports, recording) in a directory of its own.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "offline/explore.hpp"
#include "recording/recording.hpp"

namespace mpisentry::launcher::runs {

// SIGINT, SIGTERM and SIGHUP stop the runs: the one going on gets SIGTERM,
// and no other starts. stop_signal(): the signal that came, else 0.
void catch_stop_signals();
int stop_signal();

// The whole file, or nullopt when it cannot be read.
std::optional<std::string> read_text(const std::filesystem::path& path);

// A rank's recording in `dir`; empty when the rank wrote none or it cannot be read.
recording::Recording read_recording(const std::filesystem::path& dir, int rank);

// Leaves `dir` empty and there: new, empty, or one that holds `marker` (the
// file that an earlier use of it wrote, `whose`: it is emptied); any other is
// refused, saying so (`setting` names the option or key that gives it).
std::optional<std::string> prepare_directory(const std::filesystem::path& dir, std::string_view marker,
                                             std::string_view whose, std::string_view setting);

struct JobEnd {
  int exit_status = 0;  // as a shell shows it: 128 + N after signal N
  bool killed = false;  // past the time limit
  double seconds = 0;
};

// Variables added to the job's environment; an empty value unsets.
using Variables = std::vector<std::pair<std::string, std::string>>;

// Runs `command` with `variables`, in `directory` when not empty, its output
// to `output` and its stdin from /dev/null. The job stays in the launcher's
// process group, so that Ctrl-C, or whoever ends that group, ends it too. A
// job that outlives `limit`, or a stop signal, gets SIGTERM (mpiexec passes
// it to the ranks), then SIGKILL with every process below it.
JobEnd run_job(const std::vector<std::string>& command, const Variables& variables,
               const std::filesystem::path& output, std::chrono::seconds limit,
               const std::filesystem::path& directory = {});

// What a run in `run_dir` left: report.json, report.rankN.json, and the
// recordings of its `ranks` ranks in `record_dir`.
offline::explore::RunFacts facts_of(const JobEnd& end, const std::filesystem::path& run_dir,
                           const std::filesystem::path& record_dir, int ranks);

// A word as a shell reads it back.
std::string shell_word(const std::string& word);

}  // namespace mpisentry::launcher::runs
