// The build installed into a fresh prefix, as a user installs it: the
// command finds its library there, also once the prefix has moved; the man
// pages render; and the example, linked against the library found with
// find_package(mpisentry) or with pkg-config, is checked without preloading;
// the Debian package names its dependencies, its command checks the bundled
// example from the package's files alone, and lintian finds no error in it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string_view>

#include "scenario.hpp"

using namespace harness;
namespace fs = std::filesystem;

namespace {

// Installs the build into <workspace>/prefix.
fs::path install(const Workspace& workspace) {
  const fs::path prefix = workspace.dir() / "prefix";
  const JobResult installed = run_job(workspace, {CMAKE_COMMAND, "--install", BUILD_DIR, "--prefix", prefix.string()});
  INFO(describe(installed));
  REQUIRE(installed.succeeded());
  return prefix;
}

Environment with_settings(Environment env) {
  env.insert(env.end(), {{"MPISENTRY_DEADLOCK_TIMEOUT", kDeadlockTimeout}, {"MPISENTRY_VERBOSE", "1"}});
  const Environment open_mpi = open_mpi_settings();
  env.insert(env.end(), open_mpi.begin(), open_mpi.end());
  return env;
}

void check_example_report(const JobResult& result) {
  INFO(describe(result));
  CHECK(result.failed());
  REQUIRE(result.report.has_value());
  CHECK(result.report->find("[0] ERROR: GLOBAL:DEADLOCK:HARD: fatal error") != std::string::npos);
  CHECK(result.report->find("exchange_halo (") != std::string::npos);
}

// The example, linked against the library, is checked with the settings of
// the environment alone.
void check_linked_example(const Workspace& workspace, const fs::path& program) {
  const JobResult ldd = run_job(workspace, {"ldd", program.string()});
  INFO(describe(ldd));
  const auto ours = ldd.out.find("libmpisentry.so");
  REQUIRE(ours != std::string::npos);
  CHECK(ours < ldd.out.find(MPISENTRY_BUILT_FOR_OPEN_MPI ? "libmpi.so" : "libmpich.so"));  // wraps the MPI's calls
  check_example_report(run_job(workspace, plain_command(4, {program.string(), EXAMPLE_SOURCE}),
                               with_settings({{"MPISENTRY_REPORT_FILE", workspace.report_path().string()}})));
}

}  // namespace

TEST_CASE("install: the installed command finds its library, also in a prefix moved elsewhere, and the man pages render",
          "[install]") {
  Workspace workspace;
  const fs::path prefix = install(workspace);
  CHECK(fs::is_regular_file(prefix / INSTALLED_LIBRARY_DIR / "libmpisentry.so"));
  CHECK(fs::is_regular_file(prefix / "share/mpisentry/mpisentry.conf"));
  for (const std::string page : {"man1/mpisentry.1.gz", "man5/mpisentry.conf.5.gz"}) {
    INFO(page);
    const fs::path path = prefix / INSTALLED_MAN_DIR / page;
    REQUIRE(fs::is_regular_file(path));
    const JobResult rendered =
        run_job(workspace, {"sh", "-c", "gzip -dc \"$0\" | groff -man -Tutf8 -ww -z", path.string()});
    INFO(describe(rendered));
    CHECK(rendered.succeeded());
    CHECK(rendered.err.empty());  // -ww: every warning
  }

  const fs::path moved = workspace.dir() / "moved";
  fs::rename(prefix, moved);
  check_example_report(run_job(workspace,
                               {(moved / "bin/mpisentry").string(), "--report-file", workspace.report_path().string(),
                                "-n", "4", BUILD_DIR "/examples/deadlock"},
                               with_settings({})));
}

TEST_CASE("install: a build with -DBUILD_TESTING=OFF needs neither Catch2 nor a Fortran compiler, and makes only "
          "the library, the command, the man pages and the example",
          "[install]") {
  Workspace workspace;
  const fs::path build = workspace.dir() / "users-build";
  const JobResult configured =
      run_job(workspace, {CMAKE_COMMAND, "-G", "Unix Makefiles", "-S", SOURCE_DIR, "-B", build.string(),
                          "-DBUILD_TESTING=OFF", "-DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON",
                          "-DCMAKE_Fortran_COMPILER=" + (workspace.dir() / "no-fortran-compiler").string()});
  INFO(describe(configured));
  REQUIRE(configured.succeeded());
  const JobResult targets = run_job(workspace, {CMAKE_COMMAND, "--build", build.string(), "--target", "help"});
  INFO(describe(targets));
  REQUIRE(targets.succeeded());
  for (const std::string target : {"mpisentry", "mpisentry_cli", "mpisentry_man", "example_deadlock"})
    CHECK(targets.out.find("... " + target + "\n") != std::string::npos);
  for (const std::string target : {"integration_tests", "bench_", "mpiprog_"})
    CHECK(targets.out.find("... " + target) == std::string::npos);
}

TEST_CASE("install: a program built with find_package(mpisentry) is checked without preloading", "[install]") {
  Workspace workspace;
  const fs::path prefix = install(workspace);
  const fs::path project = workspace.dir() / "project";
  fs::create_directories(project);
  std::ofstream(project / "CMakeLists.txt") << "cmake_minimum_required(VERSION 3.20)\n"
                                               "project(example C)\n"
                                               "find_package(MPI REQUIRED COMPONENTS C)\n"
                                               "find_package(mpisentry 0.1 REQUIRED)\n"
                                               "add_executable(deadlock " EXAMPLE_SOURCE ")\n"
                                               "target_compile_options(deadlock PRIVATE -g -O0)\n"
                                               "target_link_libraries(deadlock PRIVATE mpisentry::mpisentry MPI::MPI_C)\n";
  const fs::path build = workspace.dir() / "project-build";
  const JobResult configured =
      run_job(workspace, {CMAKE_COMMAND, "-S", project.string(), "-B", build.string(),
                          "-DCMAKE_PREFIX_PATH=" + prefix.string(), "-DMPI_C_COMPILER=" MPI_C_COMPILER});
  INFO(describe(configured));
  REQUIRE(configured.succeeded());
  const JobResult built = run_job(workspace, {CMAKE_COMMAND, "--build", build.string()});
  INFO(describe(built));
  REQUIRE(built.succeeded());
  check_linked_example(workspace, build / "deadlock");
}

TEST_CASE("install: a program built with pkg-config's flags is checked without preloading", "[install]") {
  Workspace workspace;
  const fs::path prefix = install(workspace);
  const fs::path program = workspace.dir() / "deadlock";
  // The MPI's compiler puts its own libraries after the command line's.
  const JobResult built = run_job(
      workspace,
      {"sh", "-c", std::string(MPI_C_COMPILER) + " -g -O0 -o " + program.string() + " " EXAMPLE_SOURCE " $(pkg-config --libs " PKGCONFIG_NAME ")"},
      {{"PKG_CONFIG_PATH", (prefix / INSTALLED_PKGCONFIG_DIR).string()}});
  INFO(describe(built));
  REQUIRE(built.succeeded());
  check_linked_example(workspace, program);
}

namespace {

// The Debian package that cpack makes of the build, in <workspace>/packages.
fs::path make_package(const Workspace& workspace) {
  const fs::path dir = workspace.dir() / "packages";
  const JobResult packed =
      run_job(workspace, {CPACK_COMMAND, "--config", BUILD_DIR "/CPackConfig.cmake", "-B", dir.string()});
  INFO(describe(packed));
  REQUIRE(packed.succeeded());
  fs::path package;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".deb") package = entry.path();
  REQUIRE(!package.empty());
  return package;
}

// Unpacks a package into <workspace>/<name>, as dpkg would install it under /.
fs::path unpack(const Workspace& workspace, const fs::path& package, const std::string& name) {
  const fs::path root = workspace.dir() / name;
  const JobResult unpacked = run_job(workspace, {"dpkg-deb", "--extract", package.string(), root.string()});
  INFO(describe(unpacked));
  REQUIRE(unpacked.succeeded());
  return root;
}

}  // namespace

TEST_CASE("install: the Debian package names the MPI it needs, and its files alone check the bundled example",
          "[install]") {
  Workspace workspace;
  const fs::path package = make_package(workspace);
  const JobResult depends = run_job(workspace, {"dpkg-deb", "--field", package.string(), "Depends"});
  INFO(describe(depends));
  CHECK(depends.out.find(MPI_PACKAGE) != std::string::npos);  // found by dpkg-shlibdeps, not listed by hand
  CHECK(depends.out.find("libunwind8") != std::string::npos);
  CHECK(depends.out.find("libxxhash0") != std::string::npos);

  const fs::path root = unpack(workspace, package, "root");
  const fs::path program = workspace.dir() / "deadlock";
  const JobResult built = run_job(workspace, {MPI_C_COMPILER, "-g", "-O0", "-o", program.string(),
                                              (root / "usr/share/doc/mpisentry/examples/deadlock.c").string()});
  INFO(describe(built));
  REQUIRE(built.succeeded());
  check_example_report(run_job(workspace,
                               {(root / "usr/bin/mpisentry").string(), "--report-file", workspace.report_path().string(),
                                "-n", "4", program.string()},
                               with_settings({})));
}

TEST_CASE("install: lintian finds no error in the Debian package, whose library is private and binaries stripped",
          "[install]") {
  Workspace workspace;
  const fs::path package = make_package(workspace);
  const JobResult lint = run_job(workspace, {"lintian", "--fail-on", "error", package.string()});
  INFO(describe(lint));
  CHECK(lint.succeeded());
  CHECK(lint.out.find("E: ") == std::string::npos);

  // Off the linker's path, in the multiarch directory: preloaded, or linked
  // by the rpath of the CMake package and the pkg-config file.
  const fs::path root = unpack(workspace, package, "root");
  CHECK(std::string_view(INSTALLED_LIBRARY_DIR).starts_with("lib/" LIBRARY_ARCHITECTURE "/mpisentry"));
  const fs::path library = root / "usr" / INSTALLED_LIBRARY_DIR / "libmpisentry.so";
  CHECK(fs::is_regular_file(library));
  for (const fs::path& binary : {library, root / "usr/bin/mpisentry"}) {
    const JobResult described = run_job(workspace, {"file", "--brief", binary.string()});
    INFO(describe(described));
    CHECK(described.out.find(", stripped") != std::string::npos);
  }
  for (const std::string document : {"copyright", "changelog.Debian.gz"})
    CHECK(fs::is_regular_file(root / "usr/share/doc" / PACKAGE_NAME / document));
}
