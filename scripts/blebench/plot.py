"""blebench's plot: advertisement reports handled against reports offered, for the agent and Bleak.

Usage: plot.py RESULTS.json OUT.png (matplotlib from the bench venv).
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

results = json.load(open(sys.argv[1]))
rows = results["ingest"]
figure, axes = plt.subplots(figsize=(7, 5), dpi=110)
top = max([row["offeredPerSecond"] for row in rows] + [1]) * 1.1
axes.plot([0, top], [0, top], color="grey", linestyle=":", label="every report handled")
for client, style in (("bleagent", "o-"), ("Bleak", "s--")):
    points = sorted((row["offeredPerSecond"], row["handledPerSecond"], row["devices"]) for row in rows
                    if row["client"] == client)
    if not points:
        continue
    axes.plot([p[0] for p in points], [p[1] for p in points], style, label=client)
    for offered, handled, devices in points:
        axes.annotate(f"{devices} adv.", (offered, handled), textcoords="offset points", xytext=(6, -12), fontsize=8)
axes.set_xlim(0, top)
axes.set_ylim(0, top)
axes.set_xlabel("advertisement reports offered per second (blesim)")
axes.set_ylabel("reports handled per second")
machine = results.get("machine", {})
axes.set_title(f"Advertisement ingest, duplicates on\n{machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, "
               f"load {machine.get('loadAverageAtStart', '?')}", fontsize=9)
axes.legend(loc="upper left")
axes.grid(alpha=0.3)
figure.tight_layout()
figure.savefig(sys.argv[2])
