#!/bin/bash
# VM payload: the end-to-end scenarios against the real bluetoothd 5.66, in one boot.
# Two bleagent processes, both driven and checked through blectl:
#   p: the peripheral role on PERIPHERAL_HCI (the sensor aggregator, later the virtual payment
#      terminal after a config change and a reload);
#   c: the central role on CENTRAL_HCI (the payment-terminal scanner; its control API's central.*).
# Scenarios, in this order (docs/vm-tests.md):
#   2. c against BlueZ's unmodified example-gatt-server + example-advertisement: Battery Level read,
#      Heart Rate Measurement notifications;
#   3. Bleak (the host-made virtualenv .build/venv-bleak) against p's aggregator: BTHome decoded,
#      connect, read Temperature, notifications (Tests/Bleak/aggregator.py);
#   1. c against p's aggregator: scan, connect (with an unfiltered scan running: c lists and reports none
#      of PERIPHERAL_HCI's devices, such as the Device1 bluetoothd makes there for c), discover, read,
#      write (with response; without response
#      to Config refused before BlueZ), notifications, a link dropped from the
#      peripheral side and restored with every subscription restored exactly once;
#   4. bluetoothd stopped and started again under both agents: p registers its application and
#      advertisement again, c scans, reconnects and resubscribes, each subscription exactly once;
#   1. (cont.) p switches to the virtual payment terminal (config + reload); c's scanner sees it with
#      RSSI 127 (btvirt's only value, HCI "not available": treated as unknown, never auto-selected),
#      is told pos.select by name, and one payment is approved and one declined (indications); a Status
#      Query written without response is answered by its indication.
#   5. c switches to the sensor gateway while p advertises BTHome again (the aggregator): decoded readings,
#      a reading event when the sensor file changes; then p stops advertising and an encrypted BTHome
#      sensor (Tests/VM/bthome-advertiser.py, AES-CCM data) advertises on p's adapter: decrypted with the
#      bind key from the gateway's key file; the gateway first falls back to active scanning (bluetoothd
#      without -E has no AdvertisementMonitorManager1); then bluetoothd restarts with -E and the gateway
#      decodes a plain BTHome advertiser passively through its advertisement monitor (Discovering false).
# Every check prints PASS:/FAIL:; the exit status is the number of failures (0 = all passed).
# Build first on the host: swift build --build-tests; the Bleak venv: scripts/bleak-venv.sh.
# Run: scripts/vm-test.sh Tests/VM/scenarios.sh      (guest timeout VM_TIMEOUT, default 240 s: use 420)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VMDIR=${BLUEZ_VM_DIR:-$ROOT/../shared/bluez-vm}
[ -f "$VMDIR/bluez-up.sh" ] || VMDIR=/work/shared/bluez-vm
. "$VMDIR/bluez-up.sh"
. "$HERE/peripheral-lib.sh"
SCN=/tmp/vm-scenarios   # sockets: /lab-out cannot hold them; events go to /lab-out/events-*.jsonl
mkdir -p "$SCN"
. "$HERE/scenarios-lib.sh"
EX=/usr/share/doc/bluez-test-scripts/examples
BLEAK_PY=$ROOT/.build/venv-bleak/bin/python
started=$(date +%s)
for f in "$BLECTL" "$BLEAGENT" "$ROOT/.build/debug/libSensorAggregator.so" "$ROOT/.build/debug/libVirtualPaymentTerminal.so" \
    "$ROOT/.build/debug/libPaymentTerminalScanner.so" "$ROOT/.build/debug/libSensorGateway.so" \
    "$ROOT/.build/debug/libDiagnostics.so" "$BLEAK_PY"; do
    [ -x "$f" ] || [ -f "$f" ] || { echo "FAIL: set-up: no $f (build on the host first)"; exit 3; }
done

scenario_up || exit 98
P_ADDR=$(adapter_address "$PERIPHERAL_HCI")
C_ADDR=$(adapter_address "$CENTRAL_HCI")
echo "peripheral $PERIPHERAL_HCI $P_ADDR, central $CENTRAL_HCI $C_ADDR"

# ---------------------------------------------------------------- the central agent
agent_config c central "$CENTRAL_HCI" PaymentTerminalScanner '{ "paymentDeadlineSeconds": 25, "expiry": 30 }'
agent_start c

# ---------------------------------------------------------------- scenario 2: BlueZ's example GATT server
mark scenario-2
$PY -u "$EX/example-gatt-server" > /lab-out/gatt-server.log 2>&1 & BLUEZ_PIDS+=($!)
EX_GATT=$!
$PY -u "$EX/example-advertisement" > /lab-out/advertisement.log 2>&1 & BLUEZ_PIDS+=($!)
EX_ADV=$!
expect_within 60 "example-gatt-server registered its application" grep -q 'GATT application registered' /lab-out/gatt-server.log
expect_within 60 "example-advertisement registered" grep -q 'Advertisement registered' /lab-out/advertisement.log
check "blectl scan start (Heart Rate service filter)" ctl c scan start --service 180d
expect_within 90 "scan found TestAdvertisement" device_seen TestAdvertisement
HR=$(device_id TestAdvertisement)
echo "TestAdvertisement: $HR; devices: $(jctl c devices)"
check "connect TestAdvertisement" ctl c connect "$HR"
services=$(jctl c services "$HR")
echo "services: $(echo "$services" | jq -c '[.services[].uuid]')"
check "services include Heart Rate 180d and Battery 180f" json_ok "$services" \
    "[.services[].uuid] | index(\"$(uuid128 180d)\") and index(\"$(uuid128 180f)\")"
battery=$(jctl c read "$HR" 2a19 | jq -r .value)
battery_ok() { [[ $battery =~ ^[0-9a-f]{2}$ ]] && [ $((16#$battery)) -le 100 ]; }
check "read Battery Level 2a19 = $battery (one byte, 0-100)" battery_ok
check "subscribe Heart Rate Measurement 2a37" jctl c call central.subscribe "{\"id\":\"$HR\",\"characteristic\":\"2a37\"}"
hrm_three() { [ "$(count_events c value ".id == \"$HR\" and .characteristic == \"$(uuid128 2a37)\"")" -ge 3 ]; }
expect_within 60 "3 Heart Rate Measurement notifications" hrm_three
events c value "select(.characteristic == \"$(uuid128 2a37)\") | .value" | head -n 3 | tr '\n' ' '; echo
check "unsubscribe 2a37" jctl c call central.unsubscribe "{\"id\":\"$HR\",\"characteristic\":\"2a37\"}"
check "disconnect TestAdvertisement" ctl c disconnect "$HR"
ctl c scan stop > /dev/null
kill "$EX_GATT" "$EX_ADV" 2> /dev/null
wait "$EX_GATT" "$EX_ADV" 2> /dev/null
# Forget the peer's GATT cache on the central adapter: the same adapter address serves other
# applications next.
busctl call org.bluez "/org/bluez/$CENTRAL_HCI" org.bluez.Adapter1 RemoveDevice o "$(dev_path "$CENTRAL_HCI" "$P_ADDR")" 2> /dev/null || true
no_advertising() { [ "$(adv_instances "$PERIPHERAL_HCI")" = "y 0" ]; }
expect_within 30 "no advertisement left on $PERIPHERAL_HCI" no_advertising

# ---------------------------------------------------------------- the peripheral agent: sensor aggregator
mark aggregator
echo 2314 > "$SCN/temp"
AGGREGATOR=$(cat <<EOF
{ "sensors": [
    { "id": "room", "kind": "temperature", "notifyDelta": 0.5,
      "source": { "type": "file", "path": "$SCN/temp", "scale": 0.01, "pollSeconds": 0.5 } },
    { "id": "hum", "kind": "humidity", "source": { "type": "simulated", "waveform": "constant", "base": 46.65 } },
    { "id": "baro", "kind": "pressure", "source": { "type": "simulated", "waveform": "constant", "base": 101317 } },
    { "id": "bat", "kind": "battery", "source": { "type": "simulated", "waveform": "constant", "base": 87 } } ],
  "notification": { "intervalSeconds": 1 },
  "advertising": { "localName": "gw-vm" },
  "deviceInformation": { "manufacturer": "bleagent", "model": "gateway-vm", "serial": "VM-1" } }
EOF
)
agent_config p peripheral "$PERIPHERAL_HCI" SensorAggregator "$AGGREGATOR"
agent_start p
expect_within 60 "aggregator advertising (ActiveInstances 1)" advertising_once "$PERIPHERAL_HCI"

# ---------------------------------------------------------------- scenario 3: Bleak against the aggregator
mark scenario-3
timeout 150 "$BLEAK_PY" -u "$ROOT/Tests/Bleak/aggregator.py" --adapter "$CENTRAL_HCI" --name gw-vm \
    --temp-file "$SCN/temp" --timeout 90 > /lab-out/bleak.log 2>&1
rc=$?
cat /lab-out/bleak.log
grep -q '^FAIL' /lab-out/bleak.log && FAILS=$((FAILS + 1))
[ "$rc" -eq 0 ] || grep -q '^FAIL' /lab-out/bleak.log || fail "Bleak exited $rc"
CHECKS=$((CHECKS + $(grep -c '^PASS' /lab-out/bleak.log)))
if ! until_ok 30 not_connected "$CENTRAL_HCI" "$P_ADDR"; then
    # Bleak left the link up (a failed run): take it down so the aggregator advertises again.
    echo "NOTE: $P_ADDR still connected on $CENTRAL_HCI after Bleak; disconnecting"
    busctl call org.bluez "$(dev_path "$CENTRAL_HCI" "$P_ADDR")" org.bluez.Device1 Disconnect || true
    until_ok 30 not_connected "$CENTRAL_HCI" "$P_ADDR" || true
fi
expect_within 60 "the aggregator's advertisement still registered after Bleak (ActiveInstances 1)" advertising_once "$PERIPHERAL_HCI"

# ---------------------------------------------------------------- scenario 1: the central agent against the aggregator
mark scenario-1-aggregator
check "blectl scan start (ESS filter)" ctl c scan start --service 181a
expect_within 90 "scan found gw-vm" device_seen gw-vm
GW=$(device_id gw-vm)
check "central.devices lists btvirt's RSSI 127 (HCI's \"not available\") as null" json_ok "$(jctl c devices)" \
    "[.devices[] | select(.id == \"$GW\") | .rssi] == [null]"
# Adapter scoping: an unfiltered scan while c connects. bluetoothd then makes a Device1 under
# PERIPHERAL_HCI for the central that connected in; c (on CENTRAL_HCI) must neither report nor list it.
check "blectl scan start (no filter, for adapter scoping)" ctl c scan start
check "connect gw-vm" ctl c connect "$GW"
expect_within 10 "$PERIPHERAL_HCI has a Device1 for the central ($C_ADDR), connected" dev_connected "$PERIPHERAL_HCI" "$C_ADDR"
scoped=$(jctl c devices)
echo "central.devices: $(jq -c '[.devices[] | {name, connected}]' <<< "$scoped")"
check "adapter scoping: c lists one connected device, gw-vm, not $PERIPHERAL_HCI's Device1 for itself" json_ok "$scoped" \
    "[.devices[] | select(.connected)] | length == 1 and .[0].id == \"$GW\""
stats=$(jctl c call central.stats)
echo "central.stats: $(jq -c '.manager | {advertisementReports, otherAdapterReports, mirror: .mirror.devices}' <<< "$stats")"
check "adapter scoping: c counted $PERIPHERAL_HCI's devices as another adapter's" json_ok "$stats" \
    '.manager.otherAdapterReports > 0 and .controlScan.reports > 0'
services=$(jctl c services "$GW")
echo "services: $(echo "$services" | jq -c '[.services[].uuid]')"
check "discover: ESS, Battery, Device Information and the Aggregates service" json_ok "$services" \
    "[.services[].uuid] as \$u | [\"$(uuid128 181a)\", \"$(uuid128 180f)\", \"$(uuid128 180a)\", \"07140ec0-d234-4118-a438-685945414e79\"] | all(. as \$x | \$u | index(\$x))"
temp=$(jctl c read "$GW" 2a6e | jq -r .value)
check "read Temperature = $temp (25.00 degC after Bleak's update: c409)" [ "$temp" = c409 ]
maker=$(jctl c read "$GW" 2a29 | jq -r .value)
check "read Manufacturer Name = $maker (\"bleagent\": 626c656167656e74)" [ "$maker" = 626c656167656e74 ]
CONFIG_CHR=07140ec2-d234-4118-a438-685945414e79
VALID=0158020000050001000000a0400000c07f
check "write with response: a valid Config" jctl c write "$GW" "$CONFIG_CHR" "$VALID" --hex
cfg=$(jctl c read "$GW" "$CONFIG_CHR" | jq -r .value)
check "Config read back starts 01580200000500 ($cfg)" [ "${cfg:0:14}" = 01580200000500 ]
bad=$(ctl c write "$GW" "$CONFIG_CHR" "02${VALID:2}" --hex 2>&1)
check "write with response: Config version 2 refused with ATT error 0x80 ($bad)" grep -q -i 0x80 <<< "$bad"
wwr=$(ctl c write "$GW" "$CONFIG_CHR" "$VALID" --hex --without-response 2>&1)
wwr_rc=$?
check "write without response to Config (no such property) refused: rc $wwr_rc ($wwr)" [ "$wwr_rc" -ne 0 ]
for chr in 2a6e 2a19 07140ec1-d234-4118-a438-685945414e79; do
    check "subscribe $chr" jctl c call central.subscribe "{\"id\":\"$GW\",\"characteristic\":\"$chr\"}"
done
expect_within 30 "the peripheral lists one subscription per characteristic" subscribers_total 3
echo "subscribers: $(jctl p call peripheral.subscribers)"
echo 2600 > "$SCN/temp"
expect_within 30 "notification: Temperature 26.00 degC ($(le_hex16 2600))" value_since 1 2a6e "$(le_hex16 2600)"
check "update Battery Level 0x2a through the peripheral's control API" jctl p update 2a19 2a --hex
expect_within 30 "notification: Battery Level 2a" value_since 1 2a19 2a

# once_after LINE0 CHAR HEX WHAT: VALUE on CHAR arrived exactly once since line LINE0 of the events.
# Called after a later notification on the same link was seen: notifications arrive in order, so a
# duplicate delivery (a subscription restored twice) would already be there.
once_after() {
    local n
    n=$(value_count_since "$1" "$2" "$3")
    if [ "$n" -eq 1 ]; then pass "$4: exactly once"; else fail "$4: $n times"; fi
}
# restore_check LABEL T1 BAT1 BAT2: after a reconnection, each subscription is restored exactly once.
restore_check() {
    local label=$1 t=$2 b1=$3 b2=$4 line0
    line0=$(($(wc -l < "/lab-out/events-c.jsonl") + 1))
    expect_within 60 "$label: the peripheral lists the 3 subscriptions again" subscribers_total 3
    for chr in 2a6e 2a19 07140ec1-d234-4118-a438-685945414e79; do
        local n; n=$(subscriber_count "$chr")
        if [ "$n" = 1 ]; then pass "$label: $chr subscribed exactly once"; else fail "$label: $chr subscribed $n times"; fi
    done
    echo "$t" > "$SCN/temp"
    expect_within 30 "$label: notification Temperature $(le_hex16 "$t")" value_since "$line0" 2a6e "$(le_hex16 "$t")"
    jctl p update 2a19 "$b1" --hex > /dev/null
    expect_within 30 "$label: notification Battery $b1" value_since "$line0" 2a19 "$b1"
    jctl p update 2a19 "$b2" --hex > /dev/null
    expect_within 30 "$label: notification Battery $b2" value_since "$line0" 2a19 "$b2"
    once_after "$line0" 2a6e "$(le_hex16 "$t")" "$label: Temperature $(le_hex16 "$t") delivered"
    once_after "$line0" 2a19 "$b1" "$label: Battery $b1 delivered"
}

mark link-drop
disc0=$(count_events c disconnected ".id == \"$GW\"")
conn0=$(count_events c connected ".id == \"$GW\"")
expect_within 10 "the peripheral's bluetoothd has the central's device connected" dev_connected "$PERIPHERAL_HCI" "$C_ADDR"
check "drop the link from the peripheral side (Device1.Disconnect on $PERIPHERAL_HCI)" \
    busctl call org.bluez "$(dev_path "$PERIPHERAL_HCI" "$C_ADDR")" org.bluez.Device1 Disconnect
expect_within 60 "the central sees the link drop" more_events c disconnected ".id == \"$GW\"" "$disc0"
expect_within 90 "the central reconnects by itself" more_events c connected ".id == \"$GW\"" "$conn0"
restore_check "after the link drop" 2700 2b 2c

# ---------------------------------------------------------------- scenario 4: bluetoothd restarted
mark scenario-4
disc_before=$(count_events c discovered 'true')
conn0=$(count_events c connected ".id == \"$GW\"")
restart_bluetoothd
expect_within 90 "the aggregator's advertisement registered again (ActiveInstances 1)" advertising_once "$PERIPHERAL_HCI"
expect_within 90 "the central's scan resumed (Discovering on $CENTRAL_HCI)" discovering "$CENTRAL_HCI"
expect_within 120 "the central reconnects to gw-vm after the restart" more_events c connected ".id == \"$GW\"" "$conn0"
restore_check "after the bluetoothd restart" 2800 2d 2e
check "the central's scan reported discoveries again after the restart" [ "$(count_events c discovered 'true')" -gt "$disc_before" ]
ble_p=$(events p state 'select(.agentState == "ble") | .bleState' | tr -d '"' | tr '\n' ' ')
ble_c=$(events c state 'select(.agentState == "ble") | .bleState' | tr -d '"' | tr '\n' ' ')
echo "peripheral BLE states: $ble_p; central BLE states: $ble_c"
check "the peripheral agent went through resetting and back to poweredOn" grep -q 'resetting.*poweredOn' <<< "$ble_p"
check "the central agent went through resetting and back to poweredOn" grep -q 'resetting.*poweredOn' <<< "$ble_c"
check "the peripheral agent's role still running" role_running p
check "the central agent's role still running" role_running c
lost=$( (events p state 'select(.trigger == "backend-lost")'; events c state 'select(.trigger == "backend-lost")') | wc -l)
check "a bluetoothd restart is not a lost backend: no role was stopped for it ($lost events)" [ "$lost" -eq 0 ]
check "the central's bus connection reads under the default interval" json_ok "$(jctl c status)" \
    '.limits.busReads.reads > 0 and .limits.busReads.readIntervalMicroseconds == 500'
temp=$(jctl c read "$GW" 2a6e | jq -r .value)
check "read Temperature after the restart = $temp (28.00 degC: $(le_hex16 2800))" [ "$temp" = "$(le_hex16 2800)" ]
check "disconnect gw-vm" ctl c disconnect "$GW"
ctl c scan stop > /dev/null
expect_within 30 "gw-vm disconnected on the air" not_connected "$CENTRAL_HCI" "$P_ADDR"
busctl call org.bluez "/org/bluez/$CENTRAL_HCI" org.bluez.Adapter1 RemoveDevice o "$(dev_path "$CENTRAL_HCI" "$P_ADDR")" 2> /dev/null || true

# ---------------------------------------------------------------- scenario 1 (cont.): the payment terminal
mark scenario-1-terminal
agent_config p peripheral "$PERIPHERAL_HCI" VirtualPaymentTerminal \
    '{ "name": "VT-VM", "terminalId": "VT-VM-1", "vendor": "bleagent", "latencyMs": 500,
       "rules": [ { "amountAbove": 100000, "outcome": "declined", "reason": "amountLimit" } ] }'
reloaded=$(jctl p reload)
check "reload p: the virtual payment terminal runs" json_ok "$reloaded" \
    '.roleState.state == "running" and .roleState.plugin == "VirtualPaymentTerminal"'
expect_within 60 "the terminal advertises (ActiveInstances 1)" advertising_once "$PERIPHERAL_HCI"
terminal_listed() { jctl c call pos.terminals | jq_true '.terminals[] | select(.name == "VT-VM")'; }
expect_within 90 "the scanner lists VT-VM" terminal_listed
terminals=$(jctl c call pos.terminals)
echo "pos.terminals: $terminals"
check "RSSI 127 is unknown: rssi null, nothing auto-selected" json_ok "$terminals" \
    '(.terminals[] | select(.name == "VT-VM") | .rssi) == null and .selected == null'
check "pos.select VT-VM (by name)" jctl c call pos.select '{"terminal":"VT-VM"}'
# By Terminal Info id: once connected, bluetoothd replaces Device1.Name (the advertised "VT-VM") with the
# peer's GAP Device Name (its adapter's alias, "BlueZ 5.66" here).
info_read() { jctl c call pos.terminals | jq_true '.terminals[] | select(.terminalId == "VT-VM-1")'; }
expect_within 90 "the lane connected and read Terminal Info (VT-VM-1)" info_read
approved=$(jctl c call pos.pay '{"amount":1250,"currency":"EUR","reference":"vm-1"}')
echo "approved: $approved"
check "pos.pay 12.50 EUR approved (final status by indication)" json_ok "$approved" \
    '.state == "approved" and .phase == "final" and .terminal == "VT-VM-1"'
# A write without response on the real daemon: a Status Query as a write command (no answer; the
# answer is the terminal's Transaction Status indication, which the central subscribes to here through
# its control API beside the scanner's own subscription).
STATUS_CHR=ad580004-3600-4cd1-87f0-6e799e31fc68
QUERY_CHR=ad580005-3600-4cd1-87f0-6e799e31fc68
TERMINAL_ID=$(jctl c call pos.terminals | jq -r '.terminals[] | select(.terminalId == "VT-VM-1") | .id')
TXN_HEX=$(jq -r .transactionId <<< "$approved" | tr -d - | tr 'A-F' 'a-f')
check "subscribe Transaction Status through the control API" \
    jctl c call central.subscribe "{\"id\":\"$TERMINAL_ID\",\"characteristic\":\"$STATUS_CHR\"}"
query_line=$(($(wc -l < /lab-out/events-c.jsonl) + 1))
check "write without response: a Status Query (01 + the transaction id of vm-1)" \
    ctl c write "$TERMINAL_ID" "$QUERY_CHR" "01$TXN_HEX" --hex --without-response
# The indication: 01, the transaction id, state 02 (approved).
status_answered() {
    local n
    n=$(tail -n +"$query_line" /lab-out/events-c.jsonl | jq -c --arg c "$STATUS_CHR" --arg v "01${TXN_HEX}02" \
        'select(.kind == "value" and .data.characteristic == $c and (.data.value | startswith($v)))' 2> /dev/null |
        wc -l)
    [ "$n" -ge 1 ]
}
expect_within 30 "the query written without response is answered by an indication: vm-1 approved" status_answered
declined=$(jctl c call pos.pay '{"amount":250000,"currency":"EUR","reference":"vm-2"}')
echo "declined: $declined"
check "pos.pay 2500.00 EUR declined (amountLimit)" json_ok "$declined" '.state == "declined" and .phase == "final"'
tstatus=$(jctl p call terminal.status)
echo "terminal.status: $tstatus"

# ---------------------------------------------------------------- scenario 5: the sensor gateway
mark scenario-5-gateway
agent_config p peripheral "$PERIPHERAL_HCI" SensorAggregator "$AGGREGATOR"
reloaded=$(jctl p reload)
check "reload p: the sensor aggregator runs again" json_ok "$reloaded" \
    '.roleState.state == "running" and .roleState.plugin == "SensorAggregator"'
expect_within 60 "the aggregator advertises again (ActiveInstances 1)" advertising_once "$PERIPHERAL_HCI"
agent_config c central "$CENTRAL_HCI" SensorGateway '{ "eventIntervalSeconds": 1 }'
reloaded=$(jctl c reload)
check "reload c: the sensor gateway runs" json_ok "$reloaded" \
    '.roleState.state == "running" and .roleState.plugin == "SensorGateway"'
gw_device() { jctl c gateway device "$P_ADDR" 2> /dev/null; }
# readings_are JQ: the device's readings as {name: value} satisfy JQ.
readings_are() { gw_device | jq_true "([.readings[] | {(.name): .value}] | add) as \$r | $1"; }
aggregator_decoded() { gw_device | jq_true '.kind == "aggregator"' && readings_are '$r.pressure == 1013.17'; }
expect_within 90 "the gateway decodes the aggregator's BTHome advertisement (kind aggregator, 1013.17 hPa)" aggregator_decoded
echo "gateway.device: $(gw_device)"
check "readings from the real bluetoothd: 28.00 degC, 46.65 %, 1013.17 hPa, battery 87 %" readings_are \
    '$r.temperature == 28 and $r.humidity == 46.65 and $r.pressure == 1013.17 and $r.battery == 87'
check "RSSI 127 (btvirt's only value) is unknown: rssi null" json_ok "$(gw_device)" '.rssi == null and .encrypted == false'
line0=$(($(wc -l < /lab-out/events-c.jsonl) + 1))
echo 2950 > "$SCN/temp"
# reading_since LINE ADDRESS NAME VALUE: a reading event of ADDRESS with NAME = VALUE from line LINE on.
reading_since() {
    [ "$(tail -n +"$1" /lab-out/events-c.jsonl | jq -c --arg a "$2" --arg n "$3" --argjson v "$4" \
        'select(.kind == "plugin" and .data.name == "reading" and .data.data.address == $a)
         | .data.data.readings[] | select(.name == $n and .value == $v)' 2> /dev/null | wc -l)" -ge 1 ]
}
expect_within 60 "a reading event: 29.50 degC after the sensor file changed" reading_since "$line0" "$P_ADDR" temperature 29.5
stats=$(jctl c gateway stats)
echo "gateway.stats: $stats"
check "gateway.stats: reports decoded, no decode errors" json_ok "$stats" '.decoded > 0 and .decodeErrors == {}'
check "without bluetoothd -E the gateway falls back to active scanning and says why (no AdvertisementMonitorManager1)" \
    json_ok "$stats" '.scan.mode == "active" and (.scan.reason | contains("AdvertisementMonitorManager1"))'
check "$CENTRAL_HCI discovers (the active fallback)" discovering "$CENTRAL_HCI"
ctl c gateway devices

agent_config p peripheral "$PERIPHERAL_HCI" Diagnostics '{ "heartbeatSeconds": 0 }'
reloaded=$(jctl p reload)
check "reload p: Diagnostics (no advertisement)" json_ok "$reloaded" '.roleState.plugin == "Diagnostics"'
expect_within 30 "no advertisement left on $PERIPHERAL_HCI" no_advertising
# bthome-ble's published vector: 25.06 degC and 50.55 %, AES-CCM with the MAC 54:48:E6:8F:80:A5 in the data.
$PY -u "$HERE/bthome-advertiser.py" "$PERIPHERAL_HCI" 43a5808fe64854f196c06ffb4900112233f08ecbde \
    > /lab-out/bthome-advertiser.log 2>&1 & BLUEZ_PIDS+=($!)
ENCRYPTED_ADV=$!
expect_within 60 "an encrypted BTHome sensor advertises on $PERIPHERAL_HCI" grep -q '^advertising' /lab-out/bthome-advertiser.log
install -m 600 /dev/null "$SCN/c/bthome-keys"
echo "$P_ADDR 231d39c1d7cc1ab1aee224cd096db932" > "$SCN/c/bthome-keys"
agent_config c central "$CENTRAL_HCI" SensorGateway "{ \"eventIntervalSeconds\": 1, \"keyFile\": \"$SCN/c/bthome-keys\" }"
reloaded=$(jctl c reload)
check "reload c: the gateway with a key file" json_ok "$reloaded" '.roleState.state == "running"'
encrypted_decoded() { gw_device | jq_true '.encrypted' && readings_are '$r.temperature == 25.06 and $r.humidity == 50.55'; }
expect_within 90 "the gateway decrypts the sensor's BTHome data with its bind key: 25.06 degC, 50.55 %" encrypted_decoded
echo "gateway.device: $(gw_device)"
check "the bind key is not in the central agent's log" sh -c '! grep -q 231d39c1d7cc1ab1aee224cd096db932 /lab-out/agent-c.log'
kill "$ENCRYPTED_ADV" 2> /dev/null
wait "$ENCRYPTED_ADV" 2> /dev/null

# ---------------------------------------------------------------- scenario 5 (cont.): passive, bluetoothd -E
mark scenario-5-passive
restart_bluetoothd -E
monitor_types=$(busctl get-property org.bluez "/org/bluez/$CENTRAL_HCI" org.bluez.AdvertisementMonitorManager1 SupportedMonitorTypes 2>&1)
echo "AdvertisementMonitorManager1 on $CENTRAL_HCI: SupportedMonitorTypes $monitor_types, SupportedFeatures" \
    "$(busctl get-property org.bluez "/org/bluez/$CENTRAL_HCI" org.bluez.AdvertisementMonitorManager1 SupportedFeatures 2>&1)"
check "bluetoothd -E serves AdvertisementMonitorManager1 with or_patterns" grep -q or_patterns <<< "$monitor_types"
# An unencrypted BTHome v2 packet: temperature 28.62 degC (0x02, 0x0b2e).
$PY -u "$HERE/bthome-advertiser.py" "$PERIPHERAL_HCI" 40022e0b > /lab-out/bthome-plain-advertiser.log 2>&1 & BLUEZ_PIDS+=($!)
PLAIN_ADV=$!
expect_within 60 "a plain BTHome sensor advertises on $PERIPHERAL_HCI" grep -q '^advertising' /lab-out/bthome-plain-advertiser.log
agent_config c central "$CENTRAL_HCI" SensorGateway '{ "eventIntervalSeconds": 1 }'
reloaded=$(jctl c reload)
check "reload c: the gateway, scan auto" json_ok "$reloaded" '.roleState.state == "running"'
scan_passive() { jctl c gateway stats | jq_true '.scan.mode == "passive"'; }
expect_within 60 "the gateway scans passively: bluetoothd activated its advertisement monitor" scan_passive
plain_decoded() { gw_device | jq_true '.encrypted == false' && readings_are '$r.temperature == 28.62'; }
expect_within 90 "the gateway decodes the BTHome advertiser on $PERIPHERAL_HCI passively: 28.62 degC" plain_decoded
echo "gateway.device: $(gw_device)"
stats=$(jctl c gateway stats)
echo "gateway.stats: $stats"
check "the scan is still passive and $CENTRAL_HCI does not discover (Discovering false)" \
    sh -c "[ \"\$(busctl get-property org.bluez /org/bluez/$CENTRAL_HCI org.bluez.Adapter1 Discovering)\" = 'b false' ]"
check "gateway.stats scan: passive" json_ok "$stats" '.scan.mode == "passive"'
kill "$PLAIN_ADV" 2> /dev/null
wait "$PLAIN_ADV" 2> /dev/null

# ---------------------------------------------------------------- the end
mark end
for who in p c; do
    jctl "$who" shutdown > /dev/null 2>&1 || true
done
for who in p c; do
    pid_var=AGENT_PID_$who
    if wait "${!pid_var}"; then pass "agent $who stopped cleanly (exit 0)"; else fail "agent $who exit status $?"; fi
done
echo "--- agent logs: /lab-out/agent-p.log, /lab-out/agent-c.log (tails)"
tail -n 15 /lab-out/agent-p.log; tail -n 15 /lab-out/agent-c.log
echo "RESULT: $((CHECKS - FAILS))/$CHECKS checks passed, $FAILS failed, in $(($(date +%s) - started)) s"
[ "$FAILS" -eq 0 ]
