# Sourced by the other scripts: installs the Debian packages (bookworm, as
# root) that are missing. SETUP_SCOPE=demo, set before sourcing: those of the
# library, the command, the man pages and the example alone (scripts/demo);
# all, the default: also those of the tests, the benchmarks, the Debian
# package's test and the fuzz and sanitizer builds.
set -euo pipefail

# What -DBUILD_TESTING=OFF builds with (docs/install.md). libmpich-dev brings
# gfortran with it, which this build does not use.
demo_packages=(cmake make g++ pkg-config python3 mpich libmpich-dev libunwind-dev
               libspdlog-dev libfmt-dev nlohmann-json3-dev
               libxxhash-dev)  # the checks' buffer checksums
test_packages=(gfortran catch2  # the tests' Fortran programs; the unit and integration tests
               dpkg-dev file lintian groff-base  # the Debian package (cpack) and its checks; the man pages' test
               python3-jsonschema  # the JSON reports' test against docs/report-schema.json
               python3-sarif-python-om python3-junitparser libxml2-utils  # the CI reports' test (tests/ci_reports)
               chromium python3-pil fonts-dejavu-core  # the report page's test in a headless browser
               clang libclang-rt-14-dev  # scripts/fuzz: clang and its libFuzzer
               libasan8 libubsan1 libtsan2)  # scripts/sanitize: g++ brings them; its builds need them

# Installs those of the given packages that are missing.
install_missing() {
  local missing=() package
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  if ((${#missing[@]})); then
    echo "== installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}
case "${SETUP_SCOPE:=all}" in
  demo) install_missing "${demo_packages[@]}" ;;
  all) install_missing "${demo_packages[@]}" "${test_packages[@]}" ;;
  *) echo "scripts/packages.sh: SETUP_SCOPE is '$SETUP_SCOPE': give demo or all" >&2; exit 2 ;;
esac
