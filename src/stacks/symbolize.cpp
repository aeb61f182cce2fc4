// Symbolization with Boost.Stacktrace's libbacktrace backend, header-only:
// it reads DWARF of PIE executables and shared objects alike (the addr2line
// backend prints nothing for PIE). Loading the debug info makes the first call
// slow, so this runs only when a report is made.
#define BOOST_STACKTRACE_USE_BACKTRACE
#include <boost/stacktrace/frame.hpp>

#include <dlfcn.h>

#include <algorithm>

#include "stacks/stacks.hpp"

namespace mpisentry::stacks {
namespace {

std::string module_of(const void* pc) {
  Dl_info info{};
  return dladdr(pc, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "";
}

// The shared object the checker is linked into.
const std::string& checker_module() {
  static const std::string path = module_of(reinterpret_cast<const void*>(&module_of));
  return path;
}

std::string_view file_name(std::string_view path) { return path.substr(path.rfind('/') + 1); }

bool is_program_entry(const Frame& frame) { return frame.function == "main" || frame.function == "MAIN__"; }

Frame symbolize_frame(const void* pc, bool is_return_address) {
  // A return address points after the call: its line may be the next statement.
  const void* lookup = is_return_address ? static_cast<const char*>(pc) - 1 : pc;
  const boost::stacktrace::frame frame(lookup);
  Frame result;
  result.function = frame.name();
  if (result.function.empty()) result.function = "??";
  result.file = frame.source_file();
  result.line = static_cast<int>(frame.source_line());
  result.module = module_of(lookup);
  return result;
}

}  // namespace

bool is_implementation_module(std::string_view path, std::string_view self_path) {
  if (!self_path.empty() && path == self_path) return true;
  // libmpi* covers libmpich and libmpichfort, libuc* UCX's libucp, libuct, libucs and libucm.
  static constexpr std::string_view kPrefixes[] = {
      "libmpi",  "libuc",      "libhwloc", "libfabric",   // MPI and its transports
      "libc.so", "libpthread", "ld-linux", "linux-vdso",  // the C runtime, the kernel's vDSO
      "libunwind", "libgfortran"};
  const std::string_view name = file_name(path);
  return std::ranges::any_of(kPrefixes, [name](std::string_view prefix) { return name.starts_with(prefix); });
}

std::vector<Frame> user_frames(std::vector<Frame> frames, std::string_view self_path) {
  const auto entry = std::find_if(frames.begin(), frames.end(), is_program_entry);
  if (entry != frames.end()) frames.erase(entry + 1, frames.end());
  std::erase_if(frames, [self_path](const Frame& frame) { return is_implementation_module(frame.module, self_path); });
  return frames;
}

std::vector<Frame> symbolize_every_frame(const RawStack& stack) {
  std::vector<Frame> frames;
  frames.reserve(stack.depth);
  for (int i = 0; i < stack.depth; ++i) frames.push_back(symbolize_frame(stack.pcs[i], i != stack.interrupted));
  return frames;
}

std::vector<Frame> symbolize(const RawStack& stack) {
  return user_frames(symbolize_every_frame(stack), checker_module());
}

}  // namespace mpisentry::stacks
