# Shared set-up for scripts/run.sh, scripts/test.sh and .ci/run.
# Sourced, not executed. Installs only what is missing, so a second run is quick.

# Debian 12 packages the build and the tests need, and why:
#   libdbus-1-dev, libjson-c-dev, pkg-config  the two C libraries we wrap, found through pkg-config
#   dbus-daemon                               the private bus the tests and the demo start
#   dbus-bin, systemd                         dbus-send and busctl: D-Bus clients we did not write, used by tests
#   bluez                                     bluetoothctl: BlueZ's own client, run against blesim by tests
#   bluez-test-scripts, python3-dbus,         BlueZ's unmodified example-gatt-client, run against blesim
#     python3-gi                                by tests with Debian's /usr/bin/python3
#   python3-venv                              the virtualenv for Bleak (scripts/bleak-venv.sh)
#   libssl-dev                                libcrypto's AES-CCM: the sensor gateway decrypts encrypted BTHome
#                                               advertisements and blesim's simulated sensors encrypt them
#   libmosquitto-dev                          the MQTT client library of the fleet layer (docs/fleet.md)
#   mosquitto, mosquitto-clients, openssl     the real broker the fleet tests and scripts/fleet-scale.sh start,
#                                               its clients (the tests' consumers) and the tests' own TLS CA
BLEAGENT_APT_PACKAGES=(libdbus-1-dev libjson-c-dev pkg-config dbus-daemon dbus-bin systemd bluez
    bluez-test-scripts python3-dbus python3-gi python3-venv libssl-dev libmosquitto-dev mosquitto mosquitto-clients
    openssl)

log() { printf '==> %s\n' "$*" >&2; }

ensure_swift() {
    if ! command -v swift >/dev/null 2>&1; then
        if [ -x /opt/swift/usr/bin/swift ]; then
            export PATH="/opt/swift/usr/bin:$PATH"
        else
            log "no Swift toolchain: install Swift 6.3 (swift.org) and put it on PATH, or at /opt/swift"
            return 1
        fi
    fi
}

ensure_packages() {
    local missing=() p
    for p in "${BLEAGENT_APT_PACKAGES[@]}" "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    log "installing ${missing[*]}"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

ensure_setup() {
    ensure_swift
    ensure_packages "$@"
}
