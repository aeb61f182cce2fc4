#include "config/suppressions.hpp"

#include <algorithm>

#include "config/text.hpp"

namespace mpisentry::config {
namespace {

struct FieldWord {
  std::string_view word;
  Suppression::Field field;
};
constexpr FieldWord field_words[] = {
    {"fun", Suppression::Field::Function}, {"src", Suppression::Field::Source}, {"lib", Suppression::Field::Library}};

constexpr std::string_view kSyntax = "CHECK:fun:PATTERN, CHECK:src:PATTERN or CHECK:lib:PATTERN";

// Every check, by id.
std::vector<const CheckInfo*> all_checks() {
  std::vector<const CheckInfo*> checks;
  for (int i = 0; i < kCheckCount; ++i) checks.push_back(&check_info(static_cast<Check>(i)));
  return checks;
}

// What is wrong with the check part of a line; empty when it names a check
// that can be suppressed.
std::string check_problem(std::string_view pattern) {
  std::vector<std::string_view> names;
  const CheckInfo* unsuppressible = nullptr;
  bool suppressible = false;
  for (const CheckInfo* check : all_checks()) {
    names.push_back(check->name);
    if (!matches_check_pattern(pattern, check->name)) continue;
    if (can_be_suppressed(*check))
      suppressible = true;
    else if (!unsuppressible)
      unsuppressible = check;
  }
  if (suppressible) return {};
  if (unsuppressible)
    return std::string(unsuppressible->name) + " cannot be suppressed: " +
           (unsuppressible->ends_job ? "a deadlock verdict ends the job, which would otherwise hang with nothing said"
                                     : "it tells how a rank ended or what it saw end, and is no finding");
  std::string message = in_quotes(pattern) + " matches no check";
  const bool has_stars = pattern.find('*') != std::string_view::npos;
  if (const auto guess = has_stars ? std::string_view{} : nearest(pattern, names); !guess.empty())
    message += " (did you mean " + std::string(guess) + "?)";
  return message;
}

// The text after the last '/', or all of it.
std::string_view last_part(std::string_view path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool matches_path(std::string_view pattern, std::string_view path) {
  return !path.empty() && (matches_glob(pattern, path) || matches_glob(pattern, last_part(path)));
}

}  // namespace

bool can_be_suppressed(const CheckInfo& check) {
  return check.severity != Severity::Fatal && check.member != nullptr && check.id != Check::RankLost;
}

std::vector<Suppression> parse_suppressions(std::string_view text, std::string_view source_name,
                                            std::vector<Problem>& errors) {
  std::vector<Suppression> suppressions;
  int line_number = 0;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = trim(text.substr(start, end - start));
    const std::string where = std::string(source_name) + ':' + std::to_string(++line_number);
    start = end + 1;
    if (line.empty() || line.starts_with('#')) continue;
    const auto bad = [&](const std::string& problem) {
      errors.push_back({where, problem + ": " + in_quotes(line)});
    };
    // The check's name has colons of its own: the field is the first
    // ":fun:", ":src:" or ":lib:", and the pattern all that follows it.
    std::size_t field_at = std::string_view::npos;
    const FieldWord* field = nullptr;
    for (const FieldWord& candidate : field_words) {
      const std::string marker = ':' + std::string(candidate.word) + ':';
      if (const auto at = line.find(marker); at != std::string_view::npos && at < field_at) {
        field_at = at;
        field = &candidate;
      }
    }
    if (field == nullptr) {
      bad("not a suppression; write " + std::string(kSyntax));
      continue;
    }
    Suppression suppression{std::string(trim(line.substr(0, field_at))), field->field,
                            std::string(trim(line.substr(field_at + field->word.size() + 2))), where};
    if (suppression.checks.empty()) {
      bad("no check before :" + std::string(field->word) + ":; write " + std::string(kSyntax));
    } else if (suppression.pattern.empty()) {
      bad("no pattern after :" + std::string(field->word) + ":");
    } else if (const std::string problem = check_problem(suppression.checks); !problem.empty()) {
      bad(problem);
    } else {
      suppressions.push_back(std::move(suppression));
    }
  }
  return suppressions;
}

std::vector<Suppression> read_suppressions(const std::string& path, std::vector<Problem>& errors) {
  std::string text;
  if (const std::string problem = read_text_file(path, text); !problem.empty()) {
    errors.push_back({path, "cannot read the SUPPRESSIONS file: " + problem});
    return {};
  }
  return parse_suppressions(text, path, errors);
}

bool matches_glob(std::string_view pattern, std::string_view text) {
  // Backtracking to the last '*' only: linear in the text for each star.
  std::size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool matches_check(const Suppression& suppression, std::string_view check) {
  return matches_check_pattern(suppression.checks, check);
}

bool matches_frame(const Suppression& suppression, std::string_view function, std::string_view file,
                   std::string_view library) {
  switch (suppression.field) {
    case Suppression::Field::Function:
      return matches_glob(suppression.pattern, function) ||
             matches_glob(suppression.pattern, function.substr(0, function.find('(')));
    case Suppression::Field::Source:
      return matches_path(suppression.pattern, file);
    case Suppression::Field::Library:
      return matches_path(suppression.pattern, library);
  }
  return false;
}

}  // namespace mpisentry::config
