// Which MPI a library file belongs to, by its name (what the launcher has);
// which loaded objects are MPI's, by what they are (what the running checker
// reads).
#include <dlfcn.h>
#include <mpi.h>

#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "mpi_libraries/loaded.hpp"
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

namespace {

constexpr const char* kLib = "/usr/lib/x86_64-linux-gnu/";

// A loaded object: `file` in kLib unless it has a '/' of its own; `soname` the file's name.
LoadedObject object(const std::string& file, std::vector<std::string> needed) {
  const bool path = file.find('/') != std::string::npos;
  return {path ? file : kLib + file, path ? "" : file, std::move(needed)};
}

LoadedObject mpi_library(const std::string& file, std::vector<std::string> needed) {
  LoadedObject library = object(file, std::move(needed));
  library.holds_pmpi_init = true;
  return library;
}

LoadedObject fortran_library(const std::string& file, std::vector<std::string> needed) {
  LoadedObject library = object(file, std::move(needed));
  library.holds_fortran_pmpi_init = true;
  return library;
}

// The executable (loaded with an empty name), the vDSO and the checker, then `others`.
std::vector<LoadedObject> process(std::vector<std::string> executable_needs, std::vector<LoadedObject> others) {
  std::vector<LoadedObject> objects = {
      {"", "", std::move(executable_needs)},
      {"linux-vdso.so.1", "linux-vdso.so.1", {}},
      object("/opt/mpisentry/lib/libmpisentry.so",
             {"libmpich.so.12", "libunwind.so.8", "libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libc.so.6"}),
  };
  objects.insert(objects.end(), others.begin(), others.end());
  return objects;
}

// The file name of each object, MPI's or not, and MPI's Fortran bindings.
std::map<std::string, std::string> roles(const std::vector<LoadedObject>& objects) {
  const Classified classified = classify(objects);
  REQUIRE(classified.mpi.size() == objects.size());
  std::map<std::string, std::string> roles;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const std::string& name = objects[i].name;
    const std::string file = name.empty() ? "(executable)" : name.substr(name.rfind('/') + 1);
    roles[file] = classified.fortran_bindings[i] ? "MPI's Fortran bindings" : classified.mpi[i] ? "MPI's" : "program's";
  }
  return roles;
}

// What MPICH 4.0.2 on Debian loads, with UCX and hwloc.
std::vector<LoadedObject> mpich_stack() {
  return {
      mpi_library("libmpich.so.12", {"libhwloc.so.15", "libucp.so.0", "libucs.so.0", "libc.so.6",
                                     "ld-linux-x86-64.so.2"}),
      object("libc.so.6", {"ld-linux-x86-64.so.2"}),
      object("libhwloc.so.15", {"libudev.so.1", "libc.so.6"}),
      object("libucp.so.0", {"libuct.so.0", "libucs.so.0", "libucm.so.0", "libm.so.6", "libc.so.6"}),
      object("libucs.so.0", {"libucm.so.0", "libm.so.6", "libc.so.6"}),
      object("/lib64/ld-linux-x86-64.so.2", {}),
      object("libm.so.6", {"libc.so.6"}),
      object("libudev.so.1", {"libc.so.6"}),
      object("libuct.so.0", {"libucs.so.0", "libc.so.6"}),
      object("libucm.so.0", {"libc.so.6"}),
      object("libunwind.so.8", {"libc.so.6"}),
      object("libstdc++.so.6", {"libm.so.6", "libc.so.6", "libgcc_s.so.1"}),
      object("libgcc_s.so.1", {"libc.so.6"}),
  };
}

}  // namespace

TEST_CASE("mpi libraries: MPI's objects are its library and what it loads that the program does not",
          "[mpi_libraries]") {
  std::vector<LoadedObject> stack = mpich_stack();
  // A program's library named like MPI's, which links MPI.
  stack.push_back(object("/opt/app/libmpihelpers.so", {"libmpich.so.12", "libc.so.6"}));
  const auto found = roles(process({"libmpihelpers.so", "libmpich.so.12", "libc.so.6"}, stack));
  for (const char* mpi : {"libmpich.so.12", "libhwloc.so.15", "libucp.so.0", "libucs.so.0", "libuct.so.0",
                          "libucm.so.0", "libudev.so.1"})
    CHECK(found.at(mpi) == "MPI's");
  // libc and the loader are the executable's too, libm and libstdc++ the checker's.
  for (const char* program : {"(executable)", "linux-vdso.so.1", "libmpisentry.so", "libmpihelpers.so", "libc.so.6",
                              "ld-linux-x86-64.so.2", "libm.so.6", "libstdc++.so.6", "libunwind.so.8"})
    CHECK(found.at(program) == "program's");
}

TEST_CASE("mpi libraries: a library of MPI's stack that the program needs itself is the program's",
          "[mpi_libraries]") {
  std::vector<LoadedObject> stack = mpich_stack();
  stack.push_back(object("/opt/app/libucs_helpers.so", {"libucs.so.0", "libc.so.6"}));
  const auto found = roles(process({"libucs_helpers.so", "libmpich.so.12", "libc.so.6"}, stack));
  CHECK(found.at("libucs_helpers.so") == "program's");
  // Its handlers might be the program's: libucs and what it needs.
  CHECK(found.at("libucs.so.0") == "program's");
  CHECK(found.at("libucm.so.0") == "program's");
  CHECK(found.at("libucp.so.0") == "MPI's");
  CHECK(found.at("libmpich.so.12") == "MPI's");
}

TEST_CASE("mpi libraries: MPICH's Fortran bindings are MPI's, the Fortran runtime is the program's",
          "[mpi_libraries]") {
  std::vector<LoadedObject> stack = mpich_stack();
  stack.push_back(fortran_library("libmpichfort.so.12", {"libmpich.so.12", "libgfortran.so.5", "libc.so.6"}));
  stack.push_back(object("libgfortran.so.5", {"libquadmath.so.0", "libm.so.6", "libgcc_s.so.1", "libc.so.6"}));
  stack.push_back(object("libquadmath.so.0", {"libm.so.6", "libc.so.6"}));
  // Debian's libmpi.so.12 is a link to libmpich.so.12: DT_NEEDED names it by either.
  stack.front().name = std::string(kLib) + "libmpi.so.12";
  const auto found =
      roles(process({"libmpichfort.so.12", "libgfortran.so.5", "libmpi.so.12", "libc.so.6"}, stack));
  CHECK(found.at("libmpichfort.so.12") == "MPI's Fortran bindings");
  CHECK(found.at("libmpi.so.12") == "MPI's");
  CHECK(found.at("libucp.so.0") == "MPI's");
  CHECK(found.at("libgfortran.so.5") == "program's");
  CHECK(found.at("libquadmath.so.0") == "program's");
}

TEST_CASE("mpi libraries: Open MPI's library, runtime and bindings, the f08 bindings through mpif.h's",
          "[mpi_libraries]") {
  const std::string lib = std::string(kLib) + "openmpi/lib/";
  const std::vector<LoadedObject> stack = {
      mpi_library("libmpi.so.40", {"libopen-rte.so.40", "libopen-pal.so.40", "libm.so.6", "libhwloc.so.15",
                                   "libc.so.6"}),
      fortran_library("libmpi_usempif08.so.40", {"libmpi_mpifh.so.40", "libmpi.so.40", "libc.so.6"}),
      object(lib + "libmpi_usempi_ignore_tkr.so.40", {"libc.so.6"}),  // interfaces only: nothing of PMPI_Init's
      fortran_library("libmpi_mpifh.so.40", {"libmpi.so.40", "libopen-pal.so.40", "libc.so.6"}),
      object("libopen-rte.so.40", {"libopen-pal.so.40", "libz.so.1", "libhwloc.so.15", "libevent_core-2.1.so.7",
                                   "libc.so.6"}),
      object("libopen-pal.so.40", {"libhwloc.so.15", "libevent_core-2.1.so.7", "libevent_pthreads-2.1.so.7",
                                   "libc.so.6"}),
      object("libhwloc.so.15", {"libc.so.6"}),
      object("libevent_core-2.1.so.7", {"libc.so.6"}),
      object("libevent_pthreads-2.1.so.7", {"libevent_core-2.1.so.7", "libc.so.6"}),
      object("libz.so.1", {"libc.so.6"}),
      object("libgfortran.so.5", {"libm.so.6", "libc.so.6"}),
      object("libm.so.6", {"libc.so.6"}),
      object("libc.so.6", {}),
  };
  std::vector<LoadedObject> objects = process({"libmpi_usempif08.so.40", "libmpi_usempi_ignore_tkr.so.40",
                                               "libmpi_mpifh.so.40", "libmpi.so.40", "libgfortran.so.5", "libc.so.6"},
                                              stack);
  objects[2].needed.front() = "libmpi.so.40";  // the checker built for Open MPI
  const auto found = roles(objects);
  CHECK(found.at("libmpi_usempif08.so.40") == "MPI's Fortran bindings");
  CHECK(found.at("libmpi_mpifh.so.40") == "MPI's Fortran bindings");
  for (const char* mpi : {"libmpi.so.40", "libopen-rte.so.40", "libopen-pal.so.40", "libhwloc.so.15",
                          "libevent_core-2.1.so.7", "libevent_pthreads-2.1.so.7", "libz.so.1"})
    CHECK(found.at(mpi) == "MPI's");
  for (const char* program : {"libmpi_usempi_ignore_tkr.so.40", "libgfortran.so.5", "libm.so.6", "libc.so.6"})
    CHECK(found.at(program) == "program's");
}

TEST_CASE("mpi libraries: no PMPI_Init, no MPI, and PMPI_Init's Fortran name without MPI is no binding",
          "[mpi_libraries]") {
  std::vector<LoadedObject> stack = mpich_stack();
  stack.push_back(fortran_library("/opt/app/libmpich_extra.so", {"libc.so.6"}));
  const auto found = roles(process({"libmpich_extra.so", "libmpich.so.12", "libc.so.6"}, stack));
  CHECK(found.at("libmpich_extra.so") == "program's");
  CHECK(found.at("libmpich.so.12") == "MPI's");

  stack.front().holds_pmpi_init = false;
  for (const auto& [file, role] : roles(process({"libmpich.so.12", "libc.so.6"}, stack))) {
    INFO(file);
    CHECK(role == "program's");
  }
}

TEST_CASE("mpi libraries: in this process, the object of PMPI_Init is MPI's, this test's and libc's are not",
          "[mpi_libraries]") {
  Dl_info mpi{}, test{}, libc{};
  REQUIRE(dladdr(reinterpret_cast<const void*>(&PMPI_Init), &mpi) != 0);
  REQUIRE(dladdr(reinterpret_cast<const void*>(&family_of), &test) != 0);
  REQUIRE(dladdr(reinterpret_cast<const void*>(&dladdr), &libc) != 0);
  INFO(mpi.dli_fname << ", " << test.dli_fname << ", " << libc.dli_fname);
  CHECK(is_mpi_object(mpi.dli_fname));
  CHECK(is_mpi_code(reinterpret_cast<const void*>(&PMPI_Init)));
  CHECK_FALSE(is_fortran_bindings(mpi.dli_fname));
  CHECK_FALSE(is_mpi_object(test.dli_fname));
  CHECK_FALSE(is_mpi_code(reinterpret_cast<const void*>(&family_of)));
  CHECK_FALSE(is_mpi_object(libc.dli_fname));
  CHECK_FALSE(is_mpi_code(reinterpret_cast<const void*>(&dladdr)));
  CHECK_FALSE(is_mpi_object("/opt/app/libmpihelpers.so"));
}
