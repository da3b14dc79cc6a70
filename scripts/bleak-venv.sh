# Sourced, not executed (like scripts/lib.sh): ensure_bleak_venv creates .build/venv-bleak, a virtualenv
# with a pinned Bleak (PyPI), which Tests/BleakTests runs against blesim, and a pinned bthome-ble (Home Assistant's
# BTHome parser, all wheels), which decodes SensorAggregator's advertisements in Tests/Bleak/sensor_aggregator.py.
# Quick when it is already there.
# Python: BLEAGENT_PYTHON, else the first python3 on PATH (3.9 or newer; Bleak 3 needs it).

BLEAGENT_BLEAK_VERSION=3.1.0
BLEAGENT_BTHOME_VERSION=3.25.0

ensure_bleak_venv() {
    local venv=.build/venv-bleak stamp
    local pins=("bleak==$BLEAGENT_BLEAK_VERSION" "bthome-ble==$BLEAGENT_BTHOME_VERSION")
    stamp="${pins[*]}"
    if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.pinned" 2>/dev/null)" = "$stamp" ]; then
        return 0
    fi
    local python="${BLEAGENT_PYTHON:-python3}"
    printf '==> %s\n' "creating $venv with $stamp ($($python --version 2>&1))" >&2
    rm -rf "$venv"
    mkdir -p .build
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}"
    echo "$stamp" >"$venv/.pinned"
}
