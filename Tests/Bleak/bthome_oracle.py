"""Home Assistant's BTHome parser (bthome-ble, PyPI, pinned in .build/venv-bleak) as the oracle of the gateway's
BTHome decoder: Tests/SensorGatewayTests/BTHomeOracleTests.swift writes a corpus, this script decodes every packet
with bthome-ble exactly as Home Assistant's Bluetooth integration feeds it, and prints what it read.

    bthome_oracle.py CORPUS.json

CORPUS.json: [{"address": "AA:BB:..", "key": "32 hex digits" or null, "packets": [{"data": "hex", "time": s}]}]
Each case is one device. Output, one JSON array: per case, per packet, {"fresh": [...], "state": [...]}:
- fresh: what a new parser reads from this packet alone (its readings and events);
- state: the sensor and binary sensor values one parser holds after every packet of the case so far, fed in order
  at the given times (so packet-id de-duplication and encryption counters carry from one packet to the next).
A reading is {"kind": "sensor"|"binary"|"event", "name", "value", "unit", "steps"?, "arguments"?}; the packet id
and the signal strength (not readings of the gateway) are left out, timestamps are Unix seconds, units as the
gateway writes them (mbar is hPa).
"""

import json
import logging
import sys
from datetime import datetime

from bluetooth_sensor_state_data import BluetoothServiceInfoBleak
from bthome_ble import BTHomeBluetoothDeviceData

BTHOME = "0000fcd2-0000-1000-8000-00805f9b34fb"
UNITS = {"mbar": "hPa"}
META = {"packet_id", "signal_strength"}


def unit(description):
    value = getattr(description, "native_unit_of_measurement", None)
    if value is None:
        return None
    text = str(value)
    return UNITS.get(text, text)


def readings(update, events=True):
    found = []
    for key, value in update.entity_values.items():
        if key.key in META:
            continue
        native = value.native_value
        if isinstance(native, datetime):
            native = int(native.timestamp())
        description = update.entity_descriptions.get(key)
        found.append({"kind": "sensor", "name": key.key, "value": native, "unit": unit(description)})
    for key, value in update.binary_entity_values.items():
        found.append({"kind": "binary", "name": key.key, "value": bool(value.native_value), "unit": None})
    for key, event in (update.events.items() if events else []):
        reading = {"kind": "event", "name": key.key, "value": event.event_type, "unit": None}
        properties = event.event_properties or {}
        if "steps" in properties:
            reading["steps"] = properties["steps"]
        if "args" in properties:
            reading["arguments"] = properties["args"]
        found.append(reading)
    return found


def main():
    # bthome-ble logs a warning for every damaged packet of the corpus; only the results go out.
    logging.disable(logging.CRITICAL)
    with open(sys.argv[1]) as file:
        corpus = json.load(file)
    results = []
    for case in corpus:
        key = bytes.fromhex(case["key"]) if case.get("key") else None
        sequence = BTHomeBluetoothDeviceData(bindkey=key)
        decoded = []
        for packet in case["packets"]:
            info = BluetoothServiceInfoBleak(
                name="oracle", address=case["address"], rssi=-60, manufacturer_data={},
                service_data={BTHOME: bytes.fromhex(packet["data"])}, service_uuids=[], source="", device=None,
                advertisement=None, connectable=False, time=packet.get("time", 0.0), tx_power=None)
            fresh = BTHomeBluetoothDeviceData(bindkey=key)
            # update() only: supported() parses the advertisement too, and a second parse of one packet is a repeat.
            decoded.append({"fresh": readings(fresh.update(info)), "state": readings(sequence.update(info), events=False)})
        results.append(decoded)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
