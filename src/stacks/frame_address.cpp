// Frames as module and offset, and their text form: what a rank sends rank 0
// instead of symbolizing its stack itself.
#include <dlfcn.h>
#include <sys/stat.h>

#include <charconv>
#include <climits>
#include <cstdlib>
#include <functional>
#include <map>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "stacks/modules.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::stacks {

namespace detail {

const link_map* module_at(std::uintptr_t address) {
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<const void*>(address), &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0)
    return nullptr;
  return map;
}

std::string canonical_module_path(const char* loaded_name) {
  const char* path = loaded_name == nullptr || *loaded_name == '\0' ? kProgramFile : loaded_name;
  char resolved[PATH_MAX];
  return realpath(path, resolved) != nullptr ? resolved : path;
}

}  // namespace detail

namespace {

// The program file's identity, 0 when it cannot be read.
std::uint64_t program_identity() {
  static const std::uint64_t identity = [] {
    struct stat file {};
    if (stat(detail::kProgramFile, &file) != 0) return std::uint64_t{0};
    const std::uint64_t parts[] = {file.st_dev, file.st_ino, static_cast<std::uint64_t>(file.st_size),
                                   static_cast<std::uint64_t>(file.st_mtim.tv_sec),
                                   static_cast<std::uint64_t>(file.st_mtim.tv_nsec)};
    return std::uint64_t{std::hash<std::string_view>{}({reinterpret_cast<const char*>(parts), sizeof parts})} | 1;
  }();
  return identity;
}

// The main program's load bias.
std::uintptr_t program_bias() {
  static const std::uintptr_t bias = [] {
    link_map* map = nullptr;
    void* self = dlopen(nullptr, RTLD_NOW | RTLD_NOLOAD);
    if (self == nullptr || dlinfo(self, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return std::uintptr_t{0};
    return static_cast<std::uintptr_t>(map->l_addr);
  }();
  return bias;
}

}  // namespace

ProgramSite program_site(const void* call_site) {
  const auto pc = reinterpret_cast<std::uintptr_t>(call_site);
  const link_map* module = call_site ? detail::module_at(pc - 1) : nullptr;
  if (module == nullptr || (module->l_name != nullptr && *module->l_name != '\0')) return {};
  return {program_identity(), pc - module->l_addr};
}

const void* local_call_site(const ProgramSite& site) {
  if (site.offset == 0 || site.program != program_identity()) return nullptr;
  return reinterpret_cast<const void*>(program_bias() + site.offset);
}

std::vector<FrameAddress> locate(const RawStack& stack) {
  std::vector<FrameAddress> frames;
  frames.reserve(stack.depth);
  std::map<std::string, std::string, std::less<>> canonical;  // a stack has a few modules
  for (int i = 0; i < stack.depth; ++i) {
    const auto pc = reinterpret_cast<std::uintptr_t>(stack.pcs[i]);
    const bool return_address = i != stack.interrupted;
    // A return address may lie just past its module (a call that does not return, last in it).
    const link_map* module = detail::module_at(pc - (return_address ? 1 : 0));
    if (module == nullptr) {
      frames.push_back(FrameAddress{"", pc, return_address});
      continue;
    }
    const std::string_view name = module->l_name != nullptr ? module->l_name : "";
    auto known = canonical.find(name);
    if (known == canonical.end())
      known = canonical.emplace(std::string(name), detail::canonical_module_path(module->l_name)).first;
    frames.push_back(FrameAddress{known->second, pc - module->l_addr, return_address});
  }
  return frames;
}

// "frames/1 <modules> <frames>\n", each module "<length> <path>\n" (a path may
// hold any byte), each frame "<module index> <hex offset> <r|p>\n" (r: return
// address, p: exact pc).
namespace {

constexpr std::string_view kHeader = "frames/1 ";

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  [[noreturn]] void fail(std::string_view what) const {
    throw std::invalid_argument(fmt::format("bad frame addresses: {} at byte {} of {}", what, at_, text_.size()));
  }
  bool at_end() const { return at_ == text_.size(); }

  void literal(std::string_view expected, std::string_view what) {
    if (text_.substr(at_, expected.size()) != expected) fail(what);
    at_ += expected.size();
  }
  std::uint64_t number(int base, std::string_view what) {
    std::uint64_t value = 0;
    const char* begin = text_.data() + at_;
    const auto [end, error] = std::from_chars(begin, text_.data() + text_.size(), value, base);
    if (error != std::errc{}) fail(what);
    at_ += end - begin;
    return value;
  }
  std::string_view bytes(std::uint64_t count, std::string_view what) {
    if (count > text_.size() - at_) fail(what);
    const std::string_view taken = text_.substr(at_, count);
    at_ += count;
    return taken;
  }

 private:
  std::string_view text_;
  std::size_t at_ = 0;
};

}  // namespace

std::string serialize(const std::vector<FrameAddress>& frames) {
  std::map<std::string_view, std::size_t> index;
  std::vector<std::string_view> modules;
  std::string body;
  for (const FrameAddress& frame : frames) {
    const auto [known, added] = index.try_emplace(frame.module, modules.size());
    if (added) modules.push_back(frame.module);
    fmt::format_to(std::back_inserter(body), "{} {:x} {}\n", known->second, frame.offset,
                   frame.return_address ? 'r' : 'p');
  }
  std::string text = fmt::format("{}{} {}\n", kHeader, modules.size(), frames.size());
  for (const std::string_view module : modules) fmt::format_to(std::back_inserter(text), "{} {}\n", module.size(), module);
  return text + body;
}

std::vector<FrameAddress> parse_frame_addresses(std::string_view text) {
  Reader in(text);
  in.literal(kHeader, "no 'frames/1' header");
  const std::uint64_t module_count = in.number(10, "no module count");
  in.literal(" ", "no space after the module count");
  const std::uint64_t frame_count = in.number(10, "no frame count");
  in.literal("\n", "no end of line after the frame count");
  // Every module and frame takes at least 4 bytes: counts beyond that are lies, not allocations to make.
  if (module_count > text.size() / 4 || frame_count > text.size() / 4) in.fail("counts larger than the text");

  std::vector<std::string> modules;
  modules.reserve(module_count);
  for (std::uint64_t m = 0; m < module_count; ++m) {
    const std::uint64_t length = in.number(10, "no module path length");
    in.literal(" ", "no space after a module path length");
    modules.emplace_back(in.bytes(length, "a module path cut short"));
    in.literal("\n", "no end of line after a module path");
  }
  std::vector<FrameAddress> frames;
  frames.reserve(frame_count);
  for (std::uint64_t f = 0; f < frame_count; ++f) {
    const std::uint64_t module = in.number(10, "no module index");
    if (module >= modules.size()) in.fail("a module index out of range");
    in.literal(" ", "no space after a module index");
    const std::uint64_t offset = in.number(16, "no hexadecimal offset");
    in.literal(" ", "no space after an offset");
    const std::string_view kind = in.bytes(1, "a frame cut short");
    if (kind != "r" && kind != "p") in.fail("a frame kind other than 'r' or 'p'");
    in.literal("\n", "no end of line after a frame");
    frames.push_back(FrameAddress{modules[module], static_cast<std::uintptr_t>(offset), kind == "r"});
  }
  if (!in.at_end()) in.fail("text after the last frame");
  return frames;
}

}  // namespace mpisentry::stacks
