// What GLOBAL:RMA:CONFLICT's tests share (rma_conflicts, rma_epochs,
// rma_corpus): their programs run on 3 ranks with every check on, rank 1's
// window the target.
#pragma once

#include <string>
#include <vector>

#include "scenario.hpp"

namespace harness {

// The racy case `mode`: the job ends as it would, rank 1 reports the
// conflict `reports` times, with the rule's words, and each pattern matches
// a line of the report.
void check_rma_conflict(const Program& program, const std::string& mode, std::vector<std::string> patterns,
                        std::size_t reports = 1);

// The correct twin `mode`: it runs as without the checker, and the checked
// run neither reports the conflict nor says it did not judge an access,
// unless `not_judged`, which the run must then say.
void check_rma_twin(const Program& program, const std::string& mode, const std::string& not_judged = "");

}  // namespace harness
