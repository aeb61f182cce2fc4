// A job that a bad configuration (or a failed start-up check) stopped before
// the program ran: it ended by itself with `status`, pingpong printed no
// checksum, and no report was written. Shared by the config and launch tests.
#pragma once

#include <catch2/catch.hpp>

#include "scenario.hpp"

namespace harness {

inline void check_stopped_before_running(const JobResult& result, int status) {
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.exit_status == status);
  CHECK(result.out.find("checksum") == std::string::npos);
  CHECK_FALSE(result.report.has_value());
}

}  // namespace harness
