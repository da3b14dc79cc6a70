#!/usr/bin/env bash
# Installs the shared core for building plugins outside this repository
# (docs/plugins.md): the library and the Swift modules a plugin imports.
#   PREFIX/lib/bleagent/libBLECore.so              the one copy of the core
#   PREFIX/lib/bleagent/swift/*.swiftmodule        JSON, DBus, GATT, RoleKit
#   PREFIX/lib/bleagent/swift/C*/module.modulemap  the C modules they import (+ shim.h)
# The .swiftmodule files are compiler-specific (no library evolution): a plugin
# must be compiled by the same Swift toolchain that built the core.
# Usage: scripts/install-core.sh PREFIX [BUILD_DIR]   (default .build/debug)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:?usage: scripts/install-core.sh PREFIX [BUILD_DIR]}
build=${2:-$root/.build/debug}
[ -f "$build/libBLECore.so" ] || { echo "install-core: $build/libBLECore.so not built (swift build first)" >&2; exit 1; }
lib="$prefix/lib/bleagent"
mkdir -p "$lib/swift"
install -m 0755 "$build/libBLECore.so" "$lib/libBLECore.so"
for d in "$root"/Core/Sources/*/; do
    name=$(basename "$d")
    if [ -f "$d/module.modulemap" ]; then
        mkdir -p "$lib/swift/$name"
        install -m 0644 "$d"/module.modulemap "$d"/*.h "$lib/swift/$name/"
    else
        install -m 0644 "$build/Modules/$name.swiftmodule" "$lib/swift/$name.swiftmodule"
    fi
done
echo "install-core: core installed in $lib"
