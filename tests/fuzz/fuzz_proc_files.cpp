// What `mpisentry dump` reads from /proc of another process (parse_environ,
// parse_disposition, maps_checker): any bytes, as a process we race with or
// a kernel we did not expect could leave, read without crash or UB; the
// environment read has only names without '=' or '\0', each with the first
// value it was given.
//
// Input: one byte choosing the file (environ, status, maps), then its bytes.
#include "launcher/dump.hpp"
#include "fuzz.hpp"

#include <csignal>

using namespace mpisentry;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = fuzz::text_of(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      const launcher::Environment env = launcher::parse_environ(text);
      for (const auto& [name, value] : env) {
        fuzz::require(!name.empty() && name.find_first_of(std::string_view("=\0", 2)) == std::string::npos,
                      "an environment name is not empty and holds no '=' or NUL", name);
        fuzz::require(value.find('\0') == std::string::npos, "an environment value holds no NUL", name);
        const std::string first = '\0' + name + '=';
        const auto at = ('\0' + std::string(text)).find(first);
        fuzz::require(at != std::string::npos && ('\0' + std::string(text)).substr(at + first.size()).starts_with(value),
                      "a name has the first value given to it", name);
      }
      launcher::started_by_mpisentry(env);
      launcher::has_rank(env);
      break;
    }
    case 1:
      for (const int signal : {0, SIGUSR1, SIGUSR2, SIGRTMIN, SIGRTMAX, 64, 65}) launcher::parse_disposition(text, signal);
      break;
    default:
      launcher::maps_checker(text);
  }
  return 0;
}
