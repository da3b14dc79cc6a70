#!/bin/bash
# VM payload: the Debian package installed with dpkg and run as the unprivileged
# service it describes, against the real bluetoothd 5.66 and the real system bus
# with Debian's bluetooth D-Bus policy (/etc/dbus-1/system.d/bluetooth.conf).
#   1. dpkg -i: the postinst's users and groups, the files' owners and modes,
#      the conffile, the unit enabled, `systemd-analyze verify` with the man
#      pages installed, `man` finding the four pages;
#   2. two agents started as the unit starts the service (systemd is not PID 1
#      here): user and group bleagent with its supplementary groups, no new
#      privileges, no capabilities, umask 0077, the unit's environment, the
#      state and runtime directories as StateDirectory=/RuntimeDirectory= make
#      them. p: the packaged roles.json switched to the peripheral role with
#      the SensorAggregator (publishes and advertises); c: the packaged
#      central config (Diagnostics) on the other adapter;
#   3. as alice (in bleagent-operators): c scans, connects, reads and
#      subscribes to p; bash completion offers c's device ids; as mallory (not
#      in the group) and as root, blectl is refused;
#   4. the simulator backend under the same user; each packaged example config
#      valid; both agents shut down through blectl; dpkg --purge.
# Every check prints PASS:/FAIL:; the exit status is the number of failures.
# Build the package on the host first: scripts/package.sh.
# Run: scripts/vm-test.sh Tests/VM/package.sh
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VMDIR=${BLUEZ_VM_DIR:-$ROOT/../shared/bluez-vm}
[ -f "$VMDIR/bluez-up.sh" ] || VMDIR=/work/shared/bluez-vm
. "$VMDIR/bluez-up.sh"
. "$HERE/peripheral-lib.sh"
SCN=/tmp/vm-package
mkdir -p "$SCN"
. "$HERE/scenarios-lib.sh"
BLECTL=/usr/bin/blectl
DEB=${BLEAGENT_DEB:-$(ls "$ROOT"/.build/package/bleagent_*_amd64.deb 2> /dev/null | tail -n 1)}
[ -f "$DEB" ] || { echo "FAIL: set-up: no .deb in $ROOT/.build/package (run scripts/package.sh on the host)"; exit 3; }
started=$(date +%s)

# ---------------------------------------------------------------- 1. install
mark install
if dpkg -s bleagent > /dev/null 2>&1; then echo "FAIL: set-up: bleagent is already installed here"; exit 3; fi
# A fresh machine: whatever the host left in these paths (the guest sees the host's /) must not leak in.
rm -rf /var/lib/bleagent /run/bleagent /etc/bleagent
# man-db's trigger rebuilds the whole index (minutes under the VM's emulation); man finds the
# pages without it, and this overlay is thrown away.
rm -f /var/lib/man-db/auto-update
dpkg -i "$DEB" > /lab-out/dpkg-install.log 2>&1
check "dpkg -i $(basename "$DEB") (Depends satisfied, postinst ran)" \
    sh -c '[ "$(dpkg-query -W -f="\${Status}" bleagent)" = "install ok installed" ]'
cat /lab-out/dpkg-install.log
[ "$FAILS" -eq 0 ] || { echo "RESULT: the package did not install; nothing else to check"; exit 1; }
check "postinst: system user bleagent, group bleagent, no login shell" \
    sh -c 'getent passwd bleagent | grep -q ":/var/lib/bleagent:/usr/sbin/nologin$" && [ "$(id -gn bleagent)" = bleagent ] && [ "$(id -u bleagent)" -lt 1000 ]'
check "postinst: bleagent is in bluetooth and bleagent-operators" \
    sh -c 'id -nG bleagent | tr " " "\n" | grep -qx bluetooth && id -nG bleagent | tr " " "\n" | grep -qx bleagent-operators'
check "plugins: /usr/lib/bleagent/plugins root:root 0755, each plugin root:root 0755" \
    sh -c '[ "$(stat -c "%U:%G %a" /usr/lib/bleagent/plugins)" = "root:root 755" ] &&
        for f in /usr/lib/bleagent/plugins/*.so; do [ "$(stat -c "%U:%G %a" "$f")" = "root:root 755" ] || exit 1; done'
check "/etc/bleagent/roles.json is a conffile" sh -c 'dpkg-query -W -f="\${Conffiles}" bleagent | grep -q "/etc/bleagent/roles.json [0-9a-f]"'
check "the unit is enabled (deb-systemd-helper)" test -L /etc/systemd/system/multi-user.target.wants/bleagent.service
out=$(systemd-analyze verify /lib/systemd/system/bleagent.service 2>&1)
check "systemd-analyze verify bleagent.service, its man pages installed${out:+: $out}" test -z "$out"
for page in 8:bleagent 1:blectl 1:blesim 5:bleagent-roles.json; do
    check "man ${page#*:}(${page%%:*}) is found and renders" \
        sh -c "man -w ${page%%:*} ${page#*:} > /dev/null && MANWIDTH=80 man ${page%%:*} ${page#*:} 2> /dev/null | grep -q '^NAME'"
done
for example in /usr/share/doc/bleagent/examples/*.json; do
    check "example $(basename "$example") is valid" /usr/bin/bleagent --check-config --config "$example"
done

scenario_up || exit 98
P_ADDR=$(adapter_address "$PERIPHERAL_HCI")
echo "peripheral $PERIPHERAL_HCI $P_ADDR, central $CENTRAL_HCI"

# ---------------------------------------------------------------- 2. the agents, as the unit runs them
# What systemd does for the unit: the directories (StateDirectory=, RuntimeDirectory=, with their
# modes), then the process as User=/Group= with the user's supplementary groups, NoNewPrivileges=,
# an empty CapabilityBoundingSet=, UMask= and the service environment; then the unit's system call
# filter and MemoryDenyWriteExecute= (scripts/unit-sandbox.py, as systemd installs them).
unit_value() { sed -n "s/^$1=//p" /lib/systemd/system/bleagent.service | tail -n 1; }
install -d -o "$(unit_value User)" -g "$(unit_value Group)" -m "$(unit_value StateDirectoryMode)" /var/lib/bleagent
install -d -o "$(unit_value User)" -g "$(unit_value Group)" -m "$(unit_value RuntimeDirectoryMode)" /run/bleagent
# As systemd does for an existing StateDirectory= of another owner: everything below is the user's.
chown -R "$(unit_value User):$(unit_value Group)" /var/lib/bleagent
SERVICE=(setpriv --reuid="$(unit_value User)" --regid="$(unit_value Group)" --init-groups --no-new-privs
    --inh-caps=-all --bounding-set=-all
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/var/lib/bleagent
    USER=bleagent LOGNAME=bleagent SHELL=/usr/sbin/nologin STATE_DIRECTORY=/var/lib/bleagent
    RUNTIME_DIRECTORY=/run/bleagent
    /usr/bin/python3 "$ROOT/scripts/unit-sandbox.py" /lib/systemd/system/bleagent.service)
# service_start WHO CONFIG: bleagent as the unit's ExecStart with CONFIG (the pid stays the agent's
# through the execs); logs in /lab-out/agent-WHO.log.
service_start() {
    (umask "$(unit_value UMask)" && exec "${SERVICE[@]}" /usr/bin/bleagent --config "$2") \
        >> "/lab-out/agent-$1.log" 2>&1 3>&- &
    BLUEZ_PIDS+=($!)
    eval "AGENT_PID_$1=$!"
}
# Operators, as a deployer makes them.
adduser --quiet --disabled-password --gecos "" alice && adduser --quiet alice bleagent-operators
adduser --quiet --disabled-password --gecos "" mallory
as() { local user=$1; shift; runuser -u "$user" -- "$@"; }
# ctl/jctl of scenarios-lib.sh, as alice: p on the packaged socket, c on its own.
ctl() { local who=$1; shift; as alice "$BLECTL" --socket "$(socket_of "$who")" "$@"; }
jctl() { local who=$1; shift; as alice "$BLECTL" --socket "$(socket_of "$who")" --json "$@"; }
socket_of() { case $1 in p) echo /run/bleagent/control.sock ;; c) echo /run/bleagent/central.sock ;; s) echo /run/bleagent/sim.sock ;; esac; }

mark agents
cp /etc/bleagent/roles.json "$SCN/packaged-roles.json"
# p: the packaged file, edited as an operator would: the peripheral role with the sensor aggregator.
jq --arg hci "$PERIPHERAL_HCI" '.role = "peripheral" | .adapter = $hci | .roles.peripheral = {
    "plugin": "SensorAggregator",
    "config": { "sensors": [
        { "id": "room", "kind": "temperature", "notifyDelta": 0.1,
          "source": { "type": "simulated", "waveform": "constant", "base": 21.5 } },
        { "id": "bat", "kind": "battery", "source": { "type": "simulated", "waveform": "constant", "base": 87 } } ],
      "notification": { "intervalSeconds": 1 },
      "advertising": { "localName": "gw-pkg" },
      "deviceInformation": { "manufacturer": "bleagent", "model": "gateway-pkg", "serial": "PKG-1" } } }' \
    /etc/bleagent/roles.json > /etc/bleagent/roles.json.new && mv /etc/bleagent/roles.json.new /etc/bleagent/roles.json
# c: the packaged central config as shipped (Diagnostics), on the other adapter with its own socket and state.
jq --arg hci "$CENTRAL_HCI" '.adapter = $hci | .control.socket = "/run/bleagent/central.sock"
    | .restore.stateDirectory = "/var/lib/bleagent/central"' "$SCN/packaged-roles.json" > /etc/bleagent/central.json
service_start p /etc/bleagent/roles.json
service_start c /etc/bleagent/central.json
expect_within 60 "agent p (peripheral, SensorAggregator) running" role_running p
expect_within 60 "agent c (central, Diagnostics) running" role_running c
for who in p c; do
    pid=$(eval echo "\$AGENT_PID_$who")
    grep -E '^(Umask|Uid|Gid|Groups|Seccomp):' "/proc/$pid/status" | tr '\n' ' '; echo
    check "agent $who runs as bleagent:bleagent with no capabilities, no_new_privs and the seccomp filter" sh -c \
        "grep -q '^Uid:[[:space:]]*$(id -u bleagent)[[:space:]]' /proc/$pid/status &&
         grep -q '^Gid:[[:space:]]*$(id -g bleagent)[[:space:]]' /proc/$pid/status &&
         grep -q '^CapEff:[[:space:]]*0*$' /proc/$pid/status && grep -q '^CapBnd:[[:space:]]*0*$' /proc/$pid/status &&
         grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/$pid/status && grep -q '^Seccomp:[[:space:]]*2$' /proc/$pid/status"
done
check "the control sockets are bleagent:bleagent-operators 0660" sh -c \
    '[ "$(stat -c "%U:%G %a" /run/bleagent/control.sock)" = "bleagent:bleagent-operators 660" ] &&
     [ "$(stat -c "%U:%G %a" /run/bleagent/central.sock)" = "bleagent:bleagent-operators 660" ]'
check "the state directory is bleagent's alone (0700)" sh -c '[ "$(stat -c "%U %a" /var/lib/bleagent)" = "bleagent 700" ]'

# ---------------------------------------------------------------- 3. operators, the peripheral and the central
mark operators
check "blectl status as alice (in bleagent-operators)" ctl p status
out=$(as mallory "$BLECTL" --socket /run/bleagent/control.sock status 2>&1); rc=$?
echo "mallory: exit $rc: $out"
check "blectl as mallory (not in the group) is refused: exit 69, permission denied" \
    sh -c "[ $rc -eq 69 ] && echo '$out' | grep -q 'Permission denied'"
out=$("$BLECTL" --socket /run/bleagent/control.sock status 2>&1); rc=$?
echo "root: exit $rc: $out"
check "blectl as root is refused by the agent (not its uid, not in the group): exit 69" \
    sh -c "[ $rc -eq 69 ] && echo '$out' | grep -q 'not allowed'"

mark peripheral
expect_within 60 "p advertises on $PERIPHERAL_HCI (ActiveInstances 1)" advertising_once "$PERIPHERAL_HCI"
published=$(jctl p call peripheral.services)
check "p publishes ESS (181a) and Battery (180f)" json_ok "$published" \
    '[.services[].uuid] | (index("0000181a-0000-1000-8000-00805f9b34fb") != null and index("0000180f-0000-1000-8000-00805f9b34fb") != null)'

mark central
check "c: blectl scan start (ESS filter)" ctl c scan start --service 181a
expect_within 90 "c's scan found gw-pkg" device_seen gw-pkg
GW=$(device_id gw-pkg)
echo "gw-pkg: $GW"
# complete_words WORD...: what blectl's bash completion offers for the last word, as alice.
complete_words() {
    as alice bash -c '. /usr/share/bash-completion/completions/blectl; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        _blectl; printf "%s\n" "${COMPREPLY[@]}"' _ "$@"
}
offered=$(complete_words blectl co)
check "bash completion offers connect for 'blectl co' (got: $offered)" test "$offered" = connect
offered=$(complete_words blectl --socket /run/bleagent/central.sock connect "")
echo "completion of 'blectl --socket ... connect ': $offered"
check "bash completion offers c's device id from the running agent" sh -c "echo '$offered' | grep -qx '$GW'"
check "c connects to gw-pkg" ctl c connect "$GW"
temp=$(jctl c read "$GW" 2a6e | jq -r .value)
check "c reads Temperature 21.50 °C (0x0866 little-endian: 6608), got $temp" test "$temp" = 6608
jctl c subscribe "$GW" 2a19 > "$SCN/subscribe.out" 2>&1 &
SUB=$!
BLUEZ_PIDS+=($SUB)
expect_within 30 "p lists c as subscribed to Battery Level" sh -c \
    "[ \"\$(runuser -u alice -- $BLECTL --socket /run/bleagent/control.sock --json subscribers 2a19 | jq '.subscribers | length')\" -ge 1 ]"
check "p updates Battery Level to 0x2a (as alice)" ctl p update 2a19 2a --hex
expect_within 30 "c's subscription prints the notified value 2a" grep -q '"value":"2a"' "$SCN/subscribe.out"
cat "$SCN/subscribe.out"
kill -INT "$SUB" 2> /dev/null

# ---------------------------------------------------------------- 4. the simulator under the same user
mark simulator
jq '.control.socket = "/run/bleagent/sim.sock" | .restore.stateDirectory = "/var/lib/bleagent/sim"' \
    /usr/share/doc/bleagent/examples/roles-simulator.json > /etc/bleagent/sim.json
service_start s /etc/bleagent/sim.json
expect_within 60 "agent s (backend sim: private bus and blesim as bleagent) running" role_running s
expect_within 60 "s's scanner selected a simulated terminal" sh -c \
    "runuser -u alice -- $BLECTL --socket /run/bleagent/sim.sock --json call pos.terminals | jq -e '.terminals[] | select(.selected)' > /dev/null"

# ---------------------------------------------------------------- shutdown, purge
mark shutdown
for who in s c p; do
    check "blectl shutdown $who (as alice)" ctl "$who" shutdown
    pid=$(eval echo "\$AGENT_PID_$who")
    wait "$pid"; rc=$?
    check "agent $who exited 0" test "$rc" -eq 0
done
if grep -i -E 'rejected|AccessDenied' /lab-out/dbus.log /lab-out/agent-*.log; then
    fail "the system bus refused something (above)"
else
    pass "no D-Bus policy refusal in the bus's or the agents' logs"
fi
dpkg --purge bleagent > /lab-out/dpkg-purge.log 2>&1
check "dpkg --purge removes the package, /var/lib/bleagent and the conffile" sh -c \
    '! dpkg -s bleagent > /dev/null 2>&1 && [ ! -e /var/lib/bleagent ] && [ ! -e /etc/bleagent/roles.json ] && [ ! -e /usr/bin/bleagent ]'

echo "RESULT: $((CHECKS - FAILS))/$CHECKS checks passed in $(($(date +%s) - started)) s"
exit "$FAILS"
