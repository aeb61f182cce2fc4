# Sourced by the other scripts: installs what the build needs when it is
# missing (Debian bookworm, as root) and builds into build/ and build/install/
# (not when the sourcing script set packages_only=1: it builds elsewhere).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(cmake make g++ gfortran pkg-config python3 mpich libmpich-dev libunwind-dev
          libspdlog-dev libfmt-dev catch2)
# The sanitizers' runtimes (scripts/sanitize); g++ brings them, named here
# because the sanitizer builds need them.
packages+=(libasan8 libubsan1 libtsan2)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "== installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[[ ${packages_only:-} ]] && return 0

echo "== building"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
cmake --install build --prefix build/install >/dev/null
