#!/usr/bin/env bash
# The one-copy rule (docs/ARCHITECTURE.md): the shared core's Swift symbols are
# defined in libBLECore.so and in no other image that the build produced
# (executables, plugins, test bundles) as global symbols: clients may hold
# local helpers the compiler emits for a type they use (outlined copies,
# caches). A target that depends on a core target instead of the BLECore
# product links a second copy; this catches it.
# Usage: scripts/check-one-copy.sh [BUILD_DIR]   (default .build/debug)
set -euo pipefail
dir=${1:-.build/debug}
# Every Swift module of the core package (system-library targets hold no Swift).
core_modules=()
for d in "$(dirname "$0")"/../Core/Sources/*/; do
    [ -n "$(find "$d" -name "*.swift" -print -quit)" ] && core_modules+=("$(basename "$d")")
done
core_lib="$dir/libBLECore.so"
[ -f "$core_lib" ] || { echo "one-copy: $core_lib not built" >&2; exit 1; }

prefixes=()
for m in "${core_modules[@]}"; do prefixes+=("\$s${#m}${m}"); done
pattern=$(printf '%s\\|' "${prefixes[@]}"); pattern=${pattern%\\|}

defines_core() { nm --defined-only --extern-only "$1" 2>/dev/null | awk '{print $NF}' | grep -c "^\($pattern\)" || true; }

in_core=$(defines_core "$core_lib")
[ "$in_core" -gt 0 ] || { echo "one-copy: libBLECore.so defines no core symbols?" >&2; exit 1; }

status=0 checked=0
while IFS= read -r -d '' f; do
    [ "$f" = "$core_lib" ] && continue
    head -c 4 "$f" 2>/dev/null | grep -q 'ELF' || continue
    checked=$((checked + 1))
    n=$(defines_core "$f")
    if [ "$n" -gt 0 ]; then
        echo "one-copy: $f defines $n core symbols (a second copy of the core)" >&2
        status=1
    fi
done < <(find "$dir/" -maxdepth 1 -type f \( -perm -u+x -o -name '*.so' \) -print0)
echo "one-copy: libBLECore.so defines $in_core core symbols; $checked other images define none$([ $status -eq 0 ] || echo ' (FAILED)')"
exit $status
