"""blebench's plot: advertisement reports handled against reports offered, and CPU per report, for the agent and Bleak.

Usage: plot.py RESULTS.json OUT.png (matplotlib from the bench venv).

One line per client and advertiser count, a point per offered rate (`--ingest-rates`).
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

results = json.load(open(sys.argv[1]))
rows = results["ingest"]
figure, (handled_axes, cpu_axes) = plt.subplots(1, 2, figsize=(11, 4.8), dpi=110)
top = max([row["offeredPerSecond"] for row in rows] + [row["handledPerSecond"] for row in rows] + [1]) * 1.1
handled_axes.plot([0, top], [0, top], color="grey", linestyle=":", label="every report handled")
colours = {"bleagent": "tab:blue", "Bleak": "tab:orange"}
markers = ["o", "s", "^", "D", "v"]
for index, devices in enumerate(sorted({row["devices"] for row in rows})):
    for client in ("bleagent", "Bleak"):
        points = sorted(
            (row["offeredPerSecond"], row["handledPerSecond"], row["cpuMicrosecondsPerReport"])
            for row in rows
            if row["client"] == client and row["devices"] == devices
        )
        if not points:
            continue
        style = dict(
            color=colours[client],
            marker=markers[index % len(markers)],
            linestyle="-" if client == "bleagent" else "--",
            label=f"{client}, {devices} advertisers",
        )
        handled_axes.plot([p[0] for p in points], [p[1] for p in points], **style)
        cpu = [p for p in points if p[2] is not None]
        cpu_axes.plot([p[0] for p in cpu], [p[2] for p in cpu], **style)
handled_axes.set_xlim(0, top)
handled_axes.set_ylim(0, top)
handled_axes.set_xlabel("advertisement reports offered per second (blesim)")
handled_axes.set_ylabel("reports handled per second")
handled_axes.set_title("Reports handled", fontsize=10)
handled_axes.legend(loc="upper left", fontsize=8)
handled_axes.grid(alpha=0.3)
cpu_axes.set_xlim(0, top)
cpu_axes.set_ylim(bottom=0)
cpu_axes.set_xlabel("advertisement reports offered per second (blesim)")
cpu_axes.set_ylabel("CPU µs per report handled")
cpu_axes.set_title("CPU per report (lower is better)", fontsize=10)
cpu_axes.legend(loc="lower right", fontsize=8)
cpu_axes.grid(alpha=0.3)
machine = results.get("machine", {})
figure.suptitle(
    f"Advertisement ingest, duplicates on; {machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, "
    f"load {machine.get('loadAverageAtStart', '?')}",
    fontsize=10,
)
figure.tight_layout()
figure.savefig(sys.argv[2])
