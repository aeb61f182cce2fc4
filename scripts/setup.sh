# Sourced by the other scripts: installs what the build needs when it is
# missing (scripts/packages.sh) and builds into build/ and build/install/.
# SETUP_SCOPE, set before sourcing: demo builds the library, the command, the
# man pages and the example alone (-DBUILD_TESTING=OFF) with their packages;
# all, the default, builds everything: the tests, their Fortran programs and
# the benchmarks too.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/packages.sh
case "$SETUP_SCOPE" in
  demo) testing=OFF ;;
  *) testing=ON ;;
esac

echo "== building"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING="$testing" >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
cmake --install build --prefix build/install >/dev/null
