// Which MPI a library file belongs to, by its name.
#include <catch2/catch.hpp>

#include "mpi_libraries/mpi_libraries.hpp"

using namespace mpisentry::mpi_libraries;

TEST_CASE("mpi libraries: each MPI's libraries by their file names", "[mpi_libraries]") {
  CHECK(family_of("/usr/lib/x86_64-linux-gnu/libmpich.so.12") == Family::mpich);
  CHECK(family_of("libmpi.so.12") == Family::mpich);  // MPICH's ABI, also Intel MPI's
  CHECK(family_of("/usr/lib/x86_64-linux-gnu/libmpi.so.40") == Family::open_mpi);
  CHECK(family_of("/usr/lib/x86_64-linux-gnu/libopen-pal.so.40") == Family::open_mpi);
  // By the core library alone: tests/fortran stands in for MPICH's Fortran library under either MPI.
  CHECK_FALSE(family_of("/usr/lib/x86_64-linux-gnu/libmpichfort.so.12"));
  CHECK_FALSE(family_of("/usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi_mpifh.so.40"));
  CHECK_FALSE(family_of("/opt/app/libmpiio_helpers.so"));
  CHECK_FALSE(family_of("/lib/x86_64-linux-gnu/libc.so.6"));
  CHECK_FALSE(family_of("/usr/lib/x86_64-linux-gnu/libhwloc.so.15"));  // both MPIs use it
  CHECK(name(Family::mpich) == "MPICH");
  CHECK(name(Family::open_mpi) == "Open MPI");
}

TEST_CASE("mpi libraries: the Fortran bindings whose PMPI_ calls pass the wrappers by", "[mpi_libraries]") {
  CHECK(is_fortran_bindings("/usr/lib/x86_64-linux-gnu/libmpichfort.so.12"));
  CHECK(is_fortran_bindings("/opt/mpich/lib/libmpifort.so.12"));
  CHECK(is_fortran_bindings("/usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi_mpifh.so.40"));
  // Open MPI's f08 bindings call libmpi_mpifh's routines, not PMPI_ directly.
  CHECK_FALSE(is_fortran_bindings("/usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi_usempif08.so.40"));
  CHECK_FALSE(is_fortran_bindings("/usr/lib/x86_64-linux-gnu/libmpich.so.12"));
  CHECK_FALSE(is_fortran_bindings("/usr/lib/x86_64-linux-gnu/libgfortran.so.5"));
}
