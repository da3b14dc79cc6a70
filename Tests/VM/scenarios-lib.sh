# Helpers of Tests/VM/scenarios.sh (sourced after bluez-up.sh and peripheral-lib.sh).
# Every check prints one "PASS: ..." or "FAIL: ..." line; FAILS counts the failures.
# Needs ROOT (the repository) and SCN (a scratch folder in the guest).
FAILS=0
CHECKS=0
BLECTL=$ROOT/.build/debug/blectl
BLEAGENT=$ROOT/.build/debug/bleagent
PY=/usr/bin/python3

pass() { CHECKS=$((CHECKS + 1)); echo "PASS: $*"; }
fail() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); echo "FAIL: $*"; }
# check WHAT CMD...: PASS when CMD succeeds.
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
# until_ok SECONDS CMD...: retries CMD every 0.3 s until it succeeds (0) or SECONDS pass (1).
until_ok() {
    local end=$(($(date +%s) + $1)); shift
    until "$@" > /dev/null 2>&1; do
        [ "$(date +%s)" -lt "$end" ] || return 1
        sleep 0.3
    done
}
# expect_within SECONDS WHAT CMD...: a PASS/FAIL line for an event awaited with a deadline.
expect_within() {
    local t=$1 what=$2; shift 2
    if until_ok "$t" "$@"; then pass "$what"; else fail "$what (not within ${t}s)"; fi
}
# jq_true FILTER: standard input holds JSON and FILTER's last output is true. Unlike plain
# `jq -e`, empty input fails (jq 1.6 exits 0 when it reads no value at all).
jq_true() {
    local input
    input=$(cat)
    [ -n "${input//[[:space:]]/}" ] && jq -e "$1" > /dev/null 2>&1 <<< "$input"
}
# json_ok JSON FILTER: FILTER holds on JSON (empty JSON fails).
json_ok() { jq_true "$2" <<< "$1"; }
mark() { bluez_mark "$1"; echo "==== $1"; }

# ctl AGENT ARGS...: blectl against agent p (peripheral, PERIPHERAL_HCI) or c (central, CENTRAL_HCI).
ctl() { local who=$1; shift; "$BLECTL" --socket "$SCN/$who/control.sock" "$@"; }
# jctl AGENT ARGS...: the same with --json.
jctl() { local who=$1; shift; "$BLECTL" --socket "$SCN/$who/control.sock" --json "$@"; }

# agent_config WHO ROLE ADAPTER PLUGIN PLUGIN_CONFIG_JSON: writes $SCN/WHO/roles.json.
agent_config() {
    mkdir -p "$SCN/$1"
    cat > "$SCN/$1/roles.json.new" <<EOF
{ "version": 1, "role": "$2", "backend": "bluez", "adapter": "$3",
  "restore": { "identifier": "vm-$1", "stateDirectory": "$SCN/$1/state" },
  "control": { "socket": "$SCN/$1/control.sock" },
  "pluginDirectory": "$ROOT/.build/debug",
  "roles": { "$2": { "plugin": "$4", "config": $5 } } }
EOF
    mv "$SCN/$1/roles.json.new" "$SCN/$1/roles.json"
}
role_running() { [ "$(jctl "$1" status | jq -r .roleState.state)" = running ]; }
# agent_start WHO: bleagent on $SCN/WHO/roles.json, log in /lab-out/agent-WHO.log, its events in /lab-out/events-WHO.jsonl.
agent_start() {
    "$BLEAGENT" --config "$SCN/$1/roles.json" ${BLEAGENT_ARGS:-} >> "/lab-out/agent-$1.log" 2>&1 3>&- &
    BLUEZ_PIDS+=($!)
    eval "AGENT_PID_$1=$!"
    expect_within 60 "agent $1 started, role running" role_running "$1"
    "$BLECTL" --socket "$SCN/$1/control.sock" --json events > "/lab-out/events-$1.jsonl" 2> /dev/null 3>&- &
    BLUEZ_PIDS+=($!)
}
# events WHO KIND [JQ_FILTER]: the WHO agent's events of KIND (their data objects), one per line.
events() { jq -c --arg k "$2" "select(.kind == \$k) | .data | ${3:-.}" "/lab-out/events-$1.jsonl" 2> /dev/null; }
# count_events WHO KIND JQ_SELECT: how many events of KIND the filter keeps.
count_events() { events "$1" "$2" "select($3)" | wc -l; }
has_event() { [ "$(count_events "$@")" -ge 1 ]; }
# more_events WHO KIND JQ_SELECT N: more than N such events.
more_events() { [ "$(count_events "$1" "$2" "$3")" -gt "$4" ]; }
# value_count_since LINE CHAR HEX: the central's value events for CHAR with value HEX from line LINE on.
value_count_since() {
    tail -n +"$1" "/lab-out/events-c.jsonl" | jq -c --arg c "$(uuid128 "$2")" --arg v "$3" \
        'select(.kind == "value" and .data.characteristic == $c and .data.value == $v)' 2> /dev/null | wc -l
}
value_since() { [ "$(value_count_since "$@")" -ge 1 ]; }
uuid128() { case $1 in ????) echo "0000$1-0000-1000-8000-00805f9b34fb" ;; *) echo "$1" ;; esac; }

# device_id NAME: the central's id of the device named NAME (central.devices).
device_id() { jctl c devices | jq -r --arg n "$1" '.devices[] | select(.name == $n) | .id' | head -n 1; }
device_seen() { [ -n "$(device_id "$1")" ]; }
adapter_address() {
    busctl get-property org.bluez "/org/bluez/$1" org.bluez.Adapter1 Address 2> /dev/null | awk -F'"' '{print $2}'
}
power_on() { busctl set-property org.bluez "/org/bluez/$1" org.bluez.Adapter1 Powered b true 2> /dev/null; }
powered() { [ "$(busctl get-property org.bluez "/org/bluez/$1" org.bluez.Adapter1 Powered 2> /dev/null)" = "b true" ]; }
discovering() { [ "$(busctl get-property org.bluez "/org/bluez/$1" org.bluez.Adapter1 Discovering 2> /dev/null)" = "b true" ]; }
adv_instances() { busctl get-property org.bluez "/org/bluez/$1" org.bluez.LEAdvertisingManager1 ActiveInstances 2> /dev/null; }
advertising_once() { [ "$(adv_instances "$1")" = "y 1" ]; }
# dev_path ADAPTER ADDRESS: BlueZ's object path of ADDRESS under ADAPTER.
dev_path() { echo "/org/bluez/$1/dev_$(echo "$2" | tr : _)"; }
not_connected() { ! dev_connected "$@"; }
dev_connected() {
    [ "$(busctl get-property org.bluez "$(dev_path "$1" "$2")" org.bluez.Device1 Connected 2> /dev/null)" = "b true" ]
}
subscribers_total() { [ "$(jctl p call peripheral.subscribers | jq '.subscribers | length')" = "$1" ]; }
# subscriber_count CHAR: how many times the central is listed as subscribed to CHAR (peripheral.subscribers).
subscriber_count() {
    jctl p call peripheral.subscribers | jq --arg c "$(uuid128 "$1")" '[.subscribers[] | select(.characteristic == $c)] | length'
}
# le_hex16 CENTI: the little-endian hex of a 16-bit value (a reading in hundredths).
le_hex16() { printf '%02x%02x' $(($1 & 0xff)) $((($1 >> 8) & 0xff)); }
# restart_bluetoothd [ARGS...]: SIGTERM (as systemctl restart does), start again (with ARGS, such as -E),
# wait for both adapters, power them.
restart_bluetoothd() {
    kill -TERM "$BLUEZ_BLUETOOTHD_PID"
    wait "$BLUEZ_BLUETOOTHD_PID" 2> /dev/null || true
    mark bluetoothd-stopped
    bluez_start_bluetoothd "$@"
    expect_within 120 "bluetoothd back with $PERIPHERAL_HCI and $CENTRAL_HCI" sh -c \
        "busctl get-property org.bluez /org/bluez/$CENTRAL_HCI org.bluez.Adapter1 Address && busctl get-property org.bluez /org/bluez/$PERIPHERAL_HCI org.bluez.Adapter1 Address"
    power_adapters
    mark bluetoothd-restarted
}
power_adapters() {
    local h
    for h in "$PERIPHERAL_HCI" "$CENTRAL_HCI"; do
        power_on "$h" || true
        until_ok 30 powered "$h" || echo "note: $h not powered after 30 s"
    done
}
# scenario_up: system bus, 3 btvirt controllers, bluetoothd; PERIPHERAL_HCI and CENTRAL_HCI are the
# first two adapters bluetoothd lists. Under load a controller's HCI Reset can time out and it never
# appears (peripheral-lib.sh); then btvirt and bluetoothd are started once more (logged, not hidden).
# LAB_MONITOR=1 (LAB_GUEST_ENV) records dbus-monitor --system in /lab-out/dbus-monitor.log.
two_adapters() { [ "$(echo $(bluez_adapters) | wc -w)" -ge 2 ]; }
scenario_up() {
    mkdir -p /run/dbus
    dbus-daemon --system --nofork --nopidfile > /lab-out/dbus.log 2>&1 & BLUEZ_PIDS+=($!)
    bluez_wait 60 "system bus" test -S /run/dbus/system_bus_socket || return 1
    if [ "${LAB_MONITOR:-0}" = 1 ]; then dbus-monitor --system > /lab-out/dbus-monitor.log 2>&1 & BLUEZ_PIDS+=($!); fi
    local attempt found
    for attempt in 1 2; do
        btvirt -l3 >> /lab-out/btvirt.log 2>&1 & BLUEZ_PIDS+=($!)
        local btvirt_pid=$!
        bluez_wait 60 "controllers" test -e /sys/class/bluetooth/hci2 || true
        bluez_start_bluetoothd
        until_ok 120 two_adapters || true
        found=$(bluez_adapters)
        if [ "$(echo $found | wc -w)" -ge 2 ]; then break; fi
        echo "NOTE: set-up attempt $attempt: bluetoothd lists only '$found' (dmesg below); starting btvirt and bluetoothd again"
        dmesg | grep -i -E 'hci|bluetooth' | tail -n 10
        kill "$BLUEZ_BLUETOOTHD_PID" "$btvirt_pid" 2> /dev/null || true
        wait "$BLUEZ_BLUETOOTHD_PID" "$btvirt_pid" 2> /dev/null || true
        until_ok 30 sh -c '! test -e /sys/class/bluetooth/hci0' || true
    done
    set -- $found
    PERIPHERAL_HCI=${1:-}; CENTRAL_HCI=${2:-}
    [ -n "$CENTRAL_HCI" ] || { echo "FAIL: set-up: fewer than 2 adapters after 2 attempts ($found)"; return 1; }
    echo "adapters: $found -> peripheral $PERIPHERAL_HCI, central $CENTRAL_HCI (set-up attempt $attempt)"
    power_adapters
    bluez_mark bluez-ready
}
