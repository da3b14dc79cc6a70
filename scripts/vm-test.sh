#!/bin/bash
# Run the VM payloads (Tests/VM/*.sh) against the real bluetoothd 5.66, each in
# its own throw-away VM (../shared/bluez-vm/run), with a bounded time.
#
#   scripts/vm-test.sh [PAYLOAD.sh ...]      default: every Tests/VM/*.sh but *-lib.sh
#
# Env: VM_TIMEOUT   guest timeout per payload in seconds (default 240); the host
#                   kills the VM at VM_TIMEOUT + 90 s whatever happens inside.
#      VM_OUT       folder for the runs' output (default: a new temporary one);
#                   each payload's run goes to VM_OUT/<payload name>/.
#      BLUEZ_VM     the bluez-vm tool (default ../shared/bluez-vm, else
#                   /work/shared/bluez-vm).
# Prints each payload's status and wall time; on failure, its payload.log and
# the tail of bluetoothd's log. Exit status: 0 when every payload passed, 1
# otherwise, 2 when the VM tool is missing.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VM=${BLUEZ_VM:-$ROOT/../shared/bluez-vm}
[ -x "$VM/run" ] || VM=/work/shared/bluez-vm
[ -x "$VM/run" ] || { echo "vm-test: no bluez-vm tool (set BLUEZ_VM)" >&2; exit 2; }
TMO=${VM_TIMEOUT:-240}
OUTDIR=${VM_OUT:-$(mktemp -d /tmp/vm-test.XXXXXX)}
mkdir -p "$OUTDIR"
if [ $# -eq 0 ]; then
    # every payload; *-lib.sh files are sourced by payloads, not run
    for f in "$ROOT"/Tests/VM/*.sh; do case "$f" in *-lib.sh) ;; *) set -- "$@" "$f" ;; esac; done
fi

failed=0
for payload in "$@"; do
    name=$(basename "$payload" .sh)
    out="$OUTDIR/$name"
    rm -rf "$out"; mkdir -p "$out"
    start=$SECONDS
    # the tool bounds the guest (TMO) and the VM (TMO + 90 s); timeout(1) is a last resort
    LAB_QUIET=1 LAB_OUT="$out" timeout -k 10 $((TMO + 120)) "$VM/run" "$payload" "$TMO" > "$out/run.log" 2>&1
    rc=$?
    took=$((SECONDS - start))
    if [ "$rc" -eq 0 ]; then
        echo "vm-test: PASS $name (${took}s) -> $out"
    else
        failed=1
        echo "vm-test: FAIL $name (exit $rc after ${took}s; 124 = timeout) -> $out"
        echo "---- $name: payload.log"
        cat "$out/payload.log" 2>/dev/null || echo "(no payload.log)"
        echo "---- $name: summary"
        cat "$out/summary.txt" 2>/dev/null || tail -n 40 "$out/run.log"
        if [ -s "$out/bluetoothd.log" ]; then
            echo "---- $name: bluetoothd.log (last 40 lines)"
            tail -n 40 "$out/bluetoothd.log"
        fi
    fi
done
exit "$failed"
