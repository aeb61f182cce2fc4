// MONITOR-PORTS and MONITOR-INTERFACES: where the monitors meet.
#include "config/settings.hpp"
#include "config/text.hpp"

#include <charconv>

namespace mpisentry::config {
namespace {

constexpr std::string_view kAny = "any";
constexpr int kLastPort = 65535;

bool read_port(std::string_view text, int& out) {
  const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && status == std::errc{} && end == text.data() + text.size() && out >= 1 && out <= kLastPort;
}

}  // namespace

bool parse_port_range(std::string_view text, PortRange& out, std::string& error) {
  const std::string_view whole = trim(text);
  if (equals_ignoring_case(whole, kAny)) {
    out = PortRange{};
    return true;
  }
  const std::size_t dash = whole.find('-');
  const std::string_view first = trim(whole.substr(0, dash));
  const std::string_view last = dash == std::string_view::npos ? first : trim(whole.substr(dash + 1));
  PortRange parsed;
  if (!read_port(first, parsed.first) || !read_port(last, parsed.last)) {
    error = in_quotes(whole) + ": expected any, PORT or FIRST-LAST with ports from 1 to 65535, e.g. 40000-40100";
    return false;
  }
  if (parsed.first > parsed.last) {
    error = in_quotes(whole) + ": the first port is above the last";
    return false;
  }
  out = parsed;
  return true;
}

std::string format_port_range(const PortRange& ports) {
  if (ports.first == 0) return std::string(kAny);
  if (ports.first == ports.last) return std::to_string(ports.first);
  return std::to_string(ports.first) + '-' + std::to_string(ports.last);
}

bool parse_interface_list(std::string_view text, InterfaceList& out, std::string& error) {
  const std::string_view whole = trim(text);
  if (equals_ignoring_case(whole, kAny)) {
    out = InterfaceList{};
    return true;
  }
  InterfaceList parsed;
  for (const std::string_view name : split(whole, ",")) {
    // IFNAMSIZ is 16 with its NUL; names hold no blanks or slashes.
    if (name.size() > 15 || name.find_first_of(" \t/") != std::string_view::npos) {
      error = in_quotes(whole) + ": " + in_quotes(name) + " is not a network interface's name (e.g. eth0)";
      return false;
    }
    parsed.names.emplace_back(name);
  }
  if (parsed.names.empty()) {
    error = in_quotes(whole) + ": expected any, or interface names split by commas, e.g. eth0,ib0";
    return false;
  }
  out = std::move(parsed);
  return true;
}

std::string format_interface_list(const InterfaceList& interfaces) {
  if (interfaces.names.empty()) return std::string(kAny);
  std::string text;
  for (const std::string& name : interfaces.names) text += (text.empty() ? "" : ",") + name;
  return text;
}

}  // namespace mpisentry::config
