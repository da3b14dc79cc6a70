#!/bin/bash
# Re-record the real-daemon fixture: run the probe against bluetoothd 5.66 in
# the VM (Tests/VM/conformance.sh) and copy its recording over
# Tests/Conformance/bluez-5.66.json. Review the change with git diff.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mktemp -d /tmp/conformance-rec.XXXXXX)
VM_OUT=$OUT "$ROOT/scripts/vm-test.sh" "$ROOT/Tests/VM/conformance.sh"
cp "$OUT/conformance/bluez.json" "$ROOT/Tests/Conformance/bluez-5.66.json"
echo "recorded Tests/Conformance/bluez-5.66.json (run output in $OUT)"
