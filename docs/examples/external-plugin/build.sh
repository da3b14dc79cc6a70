#!/usr/bin/env bash
# Builds libHelloPlugin.so against a core installed by scripts/install-core.sh.
# Usage: build.sh PREFIX OUTPUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=${1:?usage: build.sh PREFIX OUTPUT_DIR}
out=${2:?usage: build.sh PREFIX OUTPUT_DIR}
core="$prefix/lib/bleagent"
mkdir -p "$out"
# json-c's headers, which the core's JSON module imports through CJSONC.
cflags=()
for flag in $(pkg-config --cflags-only-I json-c); do cflags+=(-Xcc "$flag"); done
swiftc -parse-as-library -emit-library -swift-version 6 -warnings-as-errors \
    -module-name HelloPlugin \
    -I "$core/swift" -Xcc -fmodule-map-file="$core/swift/CJSONC/module.modulemap" "${cflags[@]}" \
    -L "$core" -lBLECore -Xlinker -rpath -Xlinker "$core" \
    "$here/HelloPlugin.swift" -o "$out/libHelloPlugin.so"
echo "built $out/libHelloPlugin.so"
