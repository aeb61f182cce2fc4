# Sourced by the other scripts: installs what the build needs when it is
# missing (scripts/packages.sh) and builds into build/ and build/install/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/packages.sh

echo "== building"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
cmake --install build --prefix build/install >/dev/null
