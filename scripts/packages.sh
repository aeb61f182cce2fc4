# Sourced by the other scripts: installs the Debian packages that the build,
# the tests and the fuzz build need when they are missing (bookworm, as root).
set -euo pipefail

packages=(cmake make g++ gfortran pkg-config python3 mpich libmpich-dev libunwind-dev
          libspdlog-dev libfmt-dev catch2 nlohmann-json3-dev libcli11-dev
          libxxhash-dev  # the checks' buffer checksums
          dpkg-dev file groff-base  # the Debian package (cpack) and the man pages' test
          python3-jsonschema  # the JSON reports' test against docs/report-schema.json
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
install_missing "${packages[@]}"
