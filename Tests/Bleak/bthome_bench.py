"""The peer of the sensor gateway in Sources/gateway-bench: Bleak (PyPI, BlueZ backend) scanning with duplicates,
Home Assistant's bthome-ble decoding every BTHome advertisement, one parser per device with its bind key, as Home
Assistant's BTHome integration does. Run by gateway-bench on the same blesim air as the gateway.

    bthome_bench.py ADAPTER SECONDS WARMUP KEYFILE

After WARMUP seconds it counts, for SECONDS: advertisement reports handled (Bleak's detection callbacks), reports
bthome-ble decoded and accepted (not dropped as a repeated packet id or counter), and this process's CPU time.
Prints `bench REPORTS DECODED CPU_SECONDS SECONDS`.
"""

import asyncio
import resource
import sys
import time

from bleak import BleakScanner
from bluetooth_sensor_state_data import BluetoothServiceInfoBleak
from bthome_ble import BTHomeBluetoothDeviceData

BTHOME = "0000fcd2-0000-1000-8000-00805f9b34fb"


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def main():
    adapter, seconds, warmup, key_file = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    keys = {}
    with open(key_file) as file:
        for line in file:
            fields = line.split()
            if len(fields) == 2 and not fields[0].startswith("#"):
                keys[fields[0].upper()] = bytes.fromhex(fields[1])
    parsers = {}
    counts = {"reports": 0, "decoded": 0}

    def on_report(device, advertisement):
        counts["reports"] += 1
        if BTHOME not in advertisement.service_data:
            return
        parser = parsers.get(device.address)
        if parser is None:
            parser = parsers[device.address] = BTHomeBluetoothDeviceData(bindkey=keys.get(device.address.upper()))
        info = BluetoothServiceInfoBleak.from_scan(adapter, device, advertisement, time.monotonic(), True)
        parser.update(info)
        if parser.last_service_info is info:
            counts["decoded"] += 1

    scanner = BleakScanner(on_report, bluez={"adapter": adapter, "filters": {"DuplicateData": True}})
    await scanner.start()
    await asyncio.sleep(warmup)
    start = (counts["reports"], counts["decoded"], cpu_seconds(), time.monotonic())
    await asyncio.sleep(seconds)
    end = (counts["reports"], counts["decoded"], cpu_seconds(), time.monotonic())
    await scanner.stop()
    print("bench %d %d %.3f %.3f" % tuple(b - a for a, b in zip(start, end)), flush=True)


asyncio.run(main())
