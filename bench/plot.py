#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The benchmark's picture: for each workload the time the crashed task was held and the time
until its crash was complete (core stored, journal entry written), per collector of the run, on
a log axis, each bar labelled with its ratio to drain-only of the same workload; and the crash
storm's rate. Draws what bench/run.py --json wrote (run.py --plot calls it directly).

    python3 bench/plot.py RESULTS.json PICTURE.svg     (or .png; needs python3-matplotlib)

Reads the results file, writes the picture; nothing else."""
import json
import sys

# colours by collector, in the order they are drawn; others get matplotlib's next ones
COLOURS = {"drain-only": "#9e9e9e", "coredumpd": "#2e7d32", "systemd-coredump": "#c62828"}
FIGURE_INCHES = (13, 4.6)


def bars(ax, results, key, title):
    """One panel: results["workloads"][w][collector][key] (ms) for every workload and collector."""
    workloads = list(results["workloads"])
    collectors = [c for c in results["collectors"] if c != "spool-only"]
    width = 0.8 / len(collectors)
    for i, name in enumerate(collectors):
        xs = [w + (i - (len(collectors) - 1) / 2) * width for w in range(len(workloads))]
        values = [results["workloads"][w][name][key] for w in workloads]
        drawn = ax.bar(xs, values, width, label=name, color=COLOURS.get(name))
        refs = [results["workloads"][w]["drain-only"]["held"] for w in workloads]
        ax.bar_label(drawn, labels=[f"{v / r:.1f}x" for v, r in zip(values, refs)], fontsize=7, padding=1)
    ax.set_yscale("log")
    ax.set_xticks(range(len(workloads)), workloads, fontsize=8, rotation=12)
    ax.set_ylabel("ms (log scale)")
    ax.set_title(title, fontsize=10)


def storm_panel(ax, results):
    storms = results["storms"]
    names = list(storms)
    rates = [storms[n]["rate"] for n in names]
    drawn = ax.barh(names, rates, color=[COLOURS.get(n.split(" ")[0], "#5c6bc0") for n in names])
    ax.bar_label(drawn, labels=[f"{r:.0f}/s" for r in rates], fontsize=7, padding=2)
    ax.set_xscale("log")
    ax.set_xlabel("crashes/s (log scale)")
    ax.set_title(f"storm of {results['storm_size']} tiny crashes, 4 in flight", fontsize=10)
    ax.tick_params(axis="y", labelsize=8)
    ax.invert_yaxis()  # the first collector on top, as in the text table


def draw(results, path):
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("bench/plot.py needs matplotlib: apt install python3-matplotlib, and run it with "
                         "/usr/bin/python3")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=FIGURE_INCHES, gridspec_kw={"width_ratios": [3, 3, 2]})
    bars(axes[0], results, "held", "task held (crash to waitpid), median")
    bars(axes[1], results, "complete", "complete (core and entry written), median")
    storm_panel(axes[2], results)
    axes[0].legend(fontsize=8)
    fig.suptitle(results["title"], fontsize=10)
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    with open(sys.argv[1]) as f:
        draw(json.load(f), sys.argv[2])
