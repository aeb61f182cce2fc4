#include "mpi_libraries/mpi_libraries.hpp"

#include <algorithm>

namespace mpisentry::mpi_libraries {
namespace {

bool starts_with_any(std::string_view name, std::initializer_list<std::string_view> prefixes) {
  return std::ranges::any_of(prefixes, [name](std::string_view prefix) { return name.starts_with(prefix); });
}

}  // namespace

std::string_view name(Family family) { return family == Family::open_mpi ? "Open MPI" : "MPICH"; }

std::optional<Family> family_of(std::string_view path) {
  const std::string_view file = file_name(path);
  // MPICH's ABI is libmpi.so.12 (libmpich.so.12 on Debian, whose libmpi.so.12
  // is a link to it); Open MPI's libmpi.so has other versions (40 since 3.0),
  // and its runtime libopen-pal is in every Open MPI process. The bindings'
  // libraries always come with these.
  if (starts_with_any(file, {"libmpich.so", "libmpi.so.12"})) return Family::mpich;
  if (starts_with_any(file, {"libmpi.so.", "libopen-pal.so", "libopen-rte.so"})) return Family::open_mpi;
  return std::nullopt;
}

}  // namespace mpisentry::mpi_libraries
