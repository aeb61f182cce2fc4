// A job's processes on this host, as /proc shows them.
#pragma once

#include "launcher/dump.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace mpisentry::launcher {

// The whole of /proc/PID/<file>; false with errno set when it cannot be read.
bool read_proc_file(pid_t pid, const char* file, std::string& text);

// The file name of its executable, else its command name (/proc/PID/comm).
std::string process_name(pid_t pid);

// What the dump needs to know of one process. False when it is gone.
bool read_process_state(pid_t pid, int signal, ProcessState& state);

// Every process below `pid` (children, their children, ...), in no order.
std::vector<pid_t> descendants(pid_t pid);

// Its working directory, or empty when it cannot be read.
std::string working_directory(pid_t pid);

}  // namespace mpisentry::launcher
