// Symbolization with gcc's libbacktrace, the library behind Boost.Stacktrace's
// backtrace backend, called directly for what Boost does not give: the
// frames of inlined calls, which optimized HPC code is full of. It reads DWARF
// of PIE executables and shared objects alike. Loading the debug info makes
// the first call slow, so this runs only when a report is made; one state is
// shared by every thread so that it is loaded once.
#include <backtrace.h>
#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>

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

backtrace_state* shared_state() {
  // Errors only mean "no debug info here": the frame then keeps its symbol name.
  static backtrace_state* state =
      backtrace_create_state(nullptr, /*threaded=*/1, [](void*, const char*, int) {}, nullptr);
  return state;
}

std::string demangle(const char* name) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> readable(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                                             &std::free);
  return status == 0 && readable ? readable.get() : name;
}

struct PcFrames {
  std::vector<Frame>* frames;
  const std::string* module;
};

int add_source_frame(void* data, std::uintptr_t, const char* file, int line, const char* function) {
  const auto* into = static_cast<PcFrames*>(data);
  if (file != nullptr || function != nullptr)
    into->frames->push_back(Frame{function ? demangle(function) : "??", file ? file : "", line, *into->module});
  return 0;
}

void set_symbol_name(void* data, std::uintptr_t, const char* name, std::uintptr_t, std::uintptr_t) {
  if (name != nullptr) *static_cast<std::string*>(data) = demangle(name);
}

// The frames of one pc: its function and, innermost first, the calls that
// were inlined into it.
void symbolize_pc(const void* pc, bool is_return_address, std::vector<Frame>& frames) {
  // A return address points after the call: its line may be the next statement.
  const auto lookup = reinterpret_cast<std::uintptr_t>(pc) - (is_return_address ? 1 : 0);
  const std::string module = module_of(reinterpret_cast<const void*>(lookup));
  const std::size_t before = frames.size();
  PcFrames into{&frames, &module};
  backtrace_pcinfo(shared_state(), lookup, add_source_frame, [](void*, const char*, int) {}, &into);
  if (frames.size() > before) return;
  std::string name = "??";
  backtrace_syminfo(shared_state(), lookup, set_symbol_name, [](void*, const char*, int) {}, &name);
  frames.push_back(Frame{name, "", 0, module});
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
  for (int i = 0; i < stack.depth; ++i) symbolize_pc(stack.pcs[i], i != stack.interrupted, frames);
  return frames;
}

std::vector<Frame> symbolize(const RawStack& stack) {
  return user_frames(symbolize_every_frame(stack), checker_module());
}

}  // namespace mpisentry::stacks
