// Symbolization with gcc's libbacktrace, the library behind Boost.Stacktrace's
// backtrace backend, called directly for what Boost does not give: the
// frames of inlined calls, which optimized HPC code is full of. It reads DWARF
// of PIE executables and shared objects alike. Loading the debug info makes
// the first call slow, so this runs only when a report is made; one state is
// shared by every thread so that it is loaded once.
#include <backtrace.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "mpi_libraries/loaded.hpp"
#include "mpi_libraries/mpi_libraries.hpp"
#include "stacks/modules.hpp"
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

bool is_program_entry(const Frame& frame) { return frame.function == "main" || frame.function == "MAIN__"; }

backtrace_state* shared_state() {
  // Errors only mean "no debug info here": the frame then keeps its symbol name.
  static backtrace_state* state =
      backtrace_create_state(detail::kProgramFile, /*threaded=*/1, [](void*, const char*, int) {}, nullptr);
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

// The frames of one pc of this process: its function and, innermost first,
// the calls that were inlined into it. What symbolize() and Symbolizer share.
// With `users_only`, a pc in an implementation module, which user_frames()
// leaves out whatever its function, gets a frame with its module alone and its
// debug info is not read (libc's or MPI's, when installed, would cost time):
// false then, the frames being incomplete.
bool symbolize_pc(std::uintptr_t pc, bool is_return_address, bool users_only, std::vector<Frame>& frames) {
  // A return address points after the call: its line may be the next statement.
  const std::uintptr_t lookup = pc - (is_return_address ? 1 : 0);
  const std::string module = module_of(reinterpret_cast<const void*>(lookup));
  if (users_only && is_implementation_module(module, checker_module())) {
    frames.push_back(Frame{"??", "", 0, module});
    return false;
  }
  const std::size_t before = frames.size();
  PcFrames into{&frames, &module};
  backtrace_pcinfo(shared_state(), lookup, add_source_frame, [](void*, const char*, int) {}, &into);
  if (frames.size() > before) return true;
  std::string name = "??";
  backtrace_syminfo(shared_state(), lookup, set_symbol_name, [](void*, const char*, int) {}, &name);
  frames.push_back(Frame{name, "", 0, module});
  return true;
}

std::vector<Frame> symbolize_stack(const RawStack& stack, bool users_only) {
  std::vector<Frame> frames;
  frames.reserve(stack.depth);
  for (int i = 0; i < stack.depth; ++i)
    symbolize_pc(reinterpret_cast<std::uintptr_t>(stack.pcs[i]), i != stack.interrupted, users_only, frames);
  return frames;
}

// In this process, the program's entry points (main, and MAIN__ for Fortran),
// read from the executable's symbol table; none when it is stripped.
std::vector<std::uintptr_t> program_entry_points() {
  std::uintptr_t bias = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        *static_cast<std::uintptr_t*>(data) = info->dlpi_addr;
        return 1;  // the first module is the main program
      },
      &bias);
  std::vector<std::uintptr_t> found;
  const int fd = open(detail::kProgramFile, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return found;
  struct stat status {};
  void* mapped = fstat(fd, &status) == 0 && status.st_size > 0
                     ? mmap(nullptr, status.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
                     : MAP_FAILED;
  close(fd);
  if (mapped == MAP_FAILED) return found;
  const auto* file = static_cast<const unsigned char*>(mapped);
  const std::size_t size = status.st_size;
  // Whether `count` items of `T` at `offset` lie in the file.
  const auto fits = [size](std::uint64_t offset, std::uint64_t count, std::uint64_t item) {
    return offset <= size && count <= (size - offset) / item;
  };
  const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(file);
  if (fits(0, 1, sizeof(ElfW(Ehdr))) && std::memcmp(header->e_ident, ELFMAG, SELFMAG) == 0 &&
      header->e_shentsize == sizeof(ElfW(Shdr)) && fits(header->e_shoff, header->e_shnum, sizeof(ElfW(Shdr)))) {
    const auto* sections = reinterpret_cast<const ElfW(Shdr)*>(file + header->e_shoff);
    for (int i = 0; i < header->e_shnum; ++i) {
      const ElfW(Shdr)& table = sections[i];
      if (table.sh_type != SHT_SYMTAB || table.sh_link >= header->e_shnum) continue;
      const ElfW(Shdr)& names = sections[table.sh_link];
      if (!fits(table.sh_offset, table.sh_size / sizeof(ElfW(Sym)), sizeof(ElfW(Sym))) ||
          !fits(names.sh_offset, names.sh_size, 1))
        continue;
      const auto* symbols = reinterpret_cast<const ElfW(Sym)*>(file + table.sh_offset);
      const std::string_view strings(reinterpret_cast<const char*>(file + names.sh_offset), names.sh_size);
      for (std::size_t s = 0; s < table.sh_size / sizeof(ElfW(Sym)); ++s) {
        const ElfW(Sym)& symbol = symbols[s];
        if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_shndx == SHN_UNDEF ||
            symbol.st_name >= strings.size())
          continue;
        const std::string_view name = strings.substr(symbol.st_name, strings.find('\0', symbol.st_name) - symbol.st_name);
        if (name == "main" || name == "MAIN__") found.push_back(bias + symbol.st_value);
      }
    }
  }
  munmap(mapped, size);
  return found;
}

}  // namespace

bool is_implementation_module(std::string_view path, std::string_view self_path) {
  if (!self_path.empty() && path == self_path) return true;
  if (mpi_libraries::is_mpi_object(path)) return true;
  static constexpr std::string_view kPrefixes[] = {
      "libc.so", "libpthread", "ld-linux", "linux-vdso",  // the C runtime, the kernel's vDSO
      "libunwind", "libgfortran"};
  const std::string_view name = mpi_libraries::file_name(path);
  return std::ranges::any_of(kPrefixes, [name](std::string_view prefix) { return name.starts_with(prefix); });
}

std::vector<Frame> user_frames(std::vector<Frame> frames, std::string_view self_path) {
  const auto entry = std::find_if(frames.begin(), frames.end(), is_program_entry);
  if (entry != frames.end()) frames.erase(entry + 1, frames.end());
  // What the checker itself called (the C++ runtime, say) is not the
  // program's: inside the checker's outermost frame only the program's own
  // module stays (a reduction function that MPI calls back, say).
  const auto checker = std::find_if(frames.rbegin(), frames.rend(),
                                    [self_path](const Frame& frame) { return frame.module == self_path; });
  if (checker != frames.rend() && entry != frames.end()) {
    const std::string program = frames.back().module;
    frames.erase(std::remove_if(frames.begin(), checker.base(),
                                [&program](const Frame& frame) { return frame.module != program; }),
                 checker.base());
  }
  std::erase_if(frames, [self_path](const Frame& frame) { return is_implementation_module(frame.module, self_path); });
  return frames;
}

std::vector<Frame> symbolize_every_frame(const RawStack& stack) { return symbolize_stack(stack, false); }

std::vector<Frame> symbolize_call_site(const void* call_site) {
  RawStack raw;
  raw.pcs[0] = const_cast<void*>(call_site);
  raw.depth = 1;
  return symbolize_every_frame(raw);
}

std::string place_text(const void* call_site) {
  const std::vector<Frame> frames = symbolize_call_site(call_site);
  if (frames.empty()) return fmt::format("{} ({})", call_site, "??");
  const Frame& frame = frames.front();
  if (frame.file.empty()) return fmt::format("{} ({})", call_site, frame.function);
  return fmt::format("{}:{} ({})", frame.file, frame.line, frame.function);
}

std::vector<Frame> symbolize(const RawStack& stack) {
  return user_frames(symbolize_stack(stack, true), checker_module());
}

void Symbolizer::refresh_modules() {
  struct Loaded {
    std::string name;
    std::uintptr_t bias;
  };
  std::vector<Loaded> loaded;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& modules = *static_cast<std::vector<Loaded>*>(data);
        // The first module is the main program, whatever name it is given.
        const char* name = modules.empty() || info->dlpi_name == nullptr ? "" : info->dlpi_name;
        modules.push_back(Loaded{name, info->dlpi_addr});
        return 0;
      },
      &loaded);
  // realpath outside the loader's lock, once per name.
  bases_.clear();
  for (const Loaded& module : loaded) {
    auto canonical = canonical_.find(module.name);
    if (canonical == canonical_.end())
      canonical = canonical_.emplace(module.name, detail::canonical_module_path(module.name.c_str())).first;
    bases_.emplace(canonical->second, module.bias);
  }
  modules_loaded_ = true;
}

std::optional<std::uintptr_t> Symbolizer::local_pc(const FrameAddress& address, bool& refreshed) {
  if (address.module.empty()) return std::nullopt;
  if (!modules_loaded_) {
    refresh_modules();
    refreshed = true;
  }
  for (;;) {
    if (const auto base = bases_.find(address.module); base != bases_.end()) {
      const std::uintptr_t pc = base->second + address.offset;
      // The offset must lie in that very module, not past it in another one.
      const link_map* holder = detail::module_at(pc - (address.return_address ? 1 : 0));
      if (holder != nullptr && holder->l_addr == base->second) return pc;
    }
    // Loaded since the map was made, or loaded again elsewhere: look once more, once per stack.
    if (refreshed) return std::nullopt;
    refresh_modules();
    refreshed = true;
  }
}

std::vector<Frame> Symbolizer::symbolize(const std::vector<FrameAddress>& frames) {
  return user_frames(symbolize_frames(frames, true), checker_module());
}

std::vector<Frame> Symbolizer::symbolize_every_frame(const std::vector<FrameAddress>& frames) {
  return symbolize_frames(frames, false);
}

std::vector<Frame> Symbolizer::symbolize_frames(const std::vector<FrameAddress>& frames, bool users_only) {
  std::vector<Frame> every;
  every.reserve(frames.size());
  bool refreshed = false;
  for (const FrameAddress& address : frames) {
    auto key = std::tuple(address.module, address.offset, address.return_address);
    if (const auto known = cache_.find(key); known != cache_.end()) {
      every.insert(every.end(), known->second.begin(), known->second.end());
      continue;
    }
    const std::optional<std::uintptr_t> pc = local_pc(address, refreshed);
    if (!pc) {
      // Not cached: the module may yet be loaded here.
      every.push_back(Frame{fmt::format("?? (+{:#x})", address.offset), "", 0, address.module});
      continue;
    }
    std::vector<Frame> found;
    if (symbolize_pc(*pc, address.return_address, users_only, found)) {
      ++lookups_;
      cache_.emplace(std::move(key), found);
    }
    every.insert(every.end(), found.begin(), found.end());
  }
  return every;
}

void Symbolizer::warm_up() {
  // libbacktrace reads every module's symbols and address ranges on its first lookup, and
  // the lines and functions of a compilation unit on the first lookup in it: main's unit
  // is in every report.
  std::vector<std::uintptr_t> pcs = program_entry_points();
  if (pcs.empty()) pcs.push_back(reinterpret_cast<std::uintptr_t>(&module_of));  // stripped: the modules at least
  std::vector<Frame> ignored;
  for (const std::uintptr_t pc : pcs) symbolize_pc(pc, false, false, ignored);
}

}  // namespace mpisentry::stacks
