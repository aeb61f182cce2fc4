#include "monitor/report_paths.hpp"

#include <filesystem>

#include <fmt/format.h>

namespace mpisentry::monitor {
namespace {

namespace fs = std::filesystem;

std::string resolve(const std::string& path, const std::string& base) {
  if (path.empty() || path.starts_with('/')) return path;
  return (fs::path(base) / path).lexically_normal().string();
}

}  // namespace

ReportPaths resolve_report_paths(const ReportPaths& asked, const char* launch_directory,
                                 const std::string& working_directory) {
  std::string base = working_directory;
  std::string why;
  std::error_code error;
  if (launch_directory == nullptr || *launch_directory == '\0') {
    why = fmt::format("rank 0's working directory, {} (not started by the mpisentry command)", working_directory);
  } else if (!fs::is_directory(launch_directory, error)) {
    why = fmt::format("rank 0's working directory, {}: {}, where mpisentry started, is not a directory on rank 0's "
                      "host",
                      working_directory, launch_directory);
  } else {
    base = launch_directory;
    why = fmt::format("the directory mpisentry started in, {}", base);
  }
  return {resolve(asked.text, base),  resolve(asked.json, base),  resolve(asked.dot, base), resolve(asked.html, base),
          resolve(asked.junit, base), resolve(asked.sarif, base), std::move(why)};
}

}  // namespace mpisentry::monitor
