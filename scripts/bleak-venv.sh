# Sourced, not executed (like scripts/lib.sh). Pinned virtualenvs of the Python peers, each quick when it is
# already there:
# - ensure_bleak_venv: .build/venv-bleak, a pinned Bleak (PyPI), which Tests/BleakTests runs against blesim, and a
#   pinned bthome-ble (Home Assistant's BTHome parser, all wheels), which decodes SensorAggregator's advertisements
#   in Tests/Bleak/sensor_aggregator.py.
# - ensure_bench_venv: .build/venv-bench for blebench (docs/benchmarks.md): the same Bleak, bless (a GATT server
#   over BlueZ, with dbus-next) and matplotlib for the plot.
# Python: BLEAGENT_PYTHON, else the first python3 on PATH (3.9 or newer; Bleak 3 needs it).

BLEAGENT_BLEAK_VERSION=3.1.0
BLEAGENT_BTHOME_VERSION=3.25.0
BLEAGENT_BLESS_VERSION=0.3.0
BLEAGENT_DBUS_NEXT_VERSION=0.2.3
BLEAGENT_MATPLOTLIB_VERSION=3.10.7

ensure_bleak_venv() {
    ensure_pinned_venv .build/venv-bleak "bleak==$BLEAGENT_BLEAK_VERSION" "bthome-ble==$BLEAGENT_BTHOME_VERSION"
}

ensure_bench_venv() {
    ensure_pinned_venv .build/venv-bench "bleak==$BLEAGENT_BLEAK_VERSION" "bless==$BLEAGENT_BLESS_VERSION" \
        "dbus-next==$BLEAGENT_DBUS_NEXT_VERSION" "matplotlib==$BLEAGENT_MATPLOTLIB_VERSION"
}

# ensure_pinned_venv DIR PIN...: DIR holds exactly these pins (recorded in DIR/.pinned), or is made anew.
ensure_pinned_venv() {
    local venv=$1 stamp
    shift
    stamp="$*"
    if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.pinned" 2>/dev/null)" = "$stamp" ]; then
        return 0
    fi
    local python="${BLEAGENT_PYTHON:-python3}"
    printf '==> %s\n' "creating $venv with $stamp ($($python --version 2>&1))" >&2
    rm -rf "$venv"
    mkdir -p .build
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
    echo "$stamp" >"$venv/.pinned"
}
