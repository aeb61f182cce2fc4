// The stack of a thread asleep in a system call, read without interrupting
// it: a signal handler would cut many calls short (EINTR whatever SA_RESTART
// says: poll, nanosleep, a socket with a timeout...) and would make others
// restart. The kernel gives the sleeping thread's stack pointer and pc, and
// the words above the stack pointer that point just after a call
// instruction in executable code are taken as the return addresses. A scan,
// not an unwind: a stale return address left in a live frame may show up as
// an extra frame.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "stacks/stacks.hpp"
#include "stacks/task_files.hpp"

namespace mpisentry::stacks {
namespace {

// How far above the stack pointer return addresses are looked for.
constexpr std::uintptr_t kMaxScanBytes = 1 << 20;

struct Range {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  bool contains(std::uintptr_t address, std::uintptr_t length = 1) const {
    return address >= begin && address <= end && end - address >= length;
  }
};

// The executable mappings, and the mapping that holds `sp`.
void read_mappings(std::uintptr_t sp, std::vector<Range>& code, Range& stack) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    unsigned long begin = 0, end = 0;
    char permissions[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &begin, &end, permissions) != 3) continue;
    const Range range{begin, end};
    if (permissions[0] == 'r' && permissions[2] == 'x') code.push_back(range);
    if (range.contains(sp)) stack = range;
  }
}

// The bytes before `address` end a call instruction: call rel32 (E8), or an
// indirect call (FF /2) through a register or memory, with its ModRM and any
// SIB and displacement.
bool follows_call(std::uintptr_t address, const std::vector<Range>& code) {
  const auto in_code = [&](std::uintptr_t at, std::uintptr_t length) {
    return std::any_of(code.begin(), code.end(), [&](const Range& range) { return range.contains(at, length); });
  };
  if (address < 7 || !in_code(address - 7, 7)) return false;
  const auto byte = [&](int back) { return *reinterpret_cast<const std::uint8_t*>(address - back); };
  if (byte(5) == 0xE8) return true;
  for (int length = 2; length <= 7; ++length) {
    if (byte(length) != 0xFF) continue;
    const std::uint8_t modrm = byte(length - 1);
    if (((modrm >> 3) & 7) != 2) continue;
    const int mod = modrm >> 6;
    const int rm = modrm & 7;
    const int sib = mod != 3 && rm == 4 ? 1 : 0;
    const int displacement = mod == 1 ? 1 : mod == 2 ? 4 : (mod == 0 && rm == 5) ? 4 : 0;
    if (2 + sib + displacement == length) return true;
  }
  return false;
}

// One word of the sleeping thread's stack, whatever it holds. The scan reads
// every word on purpose; in a program built with AddressSanitizer that
// includes its frames' poisoned redzones, which ASan would report
// (stack-buffer-underflow in the outside_mpi forensics test).
__attribute__((no_sanitize("address"), noinline)) std::uintptr_t stack_word(std::uintptr_t at) {
  return *reinterpret_cast<const std::uintptr_t*>(at);
}

}  // namespace

Asleep capture_asleep(pid_t tid, RawStack& out) {
  const std::optional<Syscall> before = read_syscall(tid);
  if (!before || !before->in_system_call()) return Asleep::NotInCall;
  // The call's own pc, exact, whatever else can be read.
  out = RawStack::at_pc(before->pc);
  std::vector<Range> code;
  Range stack;
  read_mappings(before->sp, code, stack);
  if (!stack.contains(before->sp, sizeof(void*))) return Asleep::CallOnly;
  RawStack scanned = out;
  const std::uintptr_t limit = std::min<std::uintptr_t>(stack.end, before->sp + kMaxScanBytes);
  for (std::uintptr_t at = before->sp; at + sizeof(void*) <= limit && scanned.depth < RawStack::kMaxFrames;
       at += sizeof(void*)) {
    const std::uintptr_t word = stack_word(at);
    if (follows_call(word, code)) scanned.pcs[scanned.depth++] = reinterpret_cast<void*>(word);
  }
  // Still in the same call: the words read were its stack.
  if (read_syscall(tid) != before) return Asleep::Moved;
  out = scanned;
  return Asleep::Scanned;
}

}  // namespace mpisentry::stacks
