#!/usr/bin/env python3
"""Sums an Nsight Compute CSV of gpu__time_duration.sum by kernel name: launches, total and
share, longest first, and the total over all kernels.

    kernel_table.py profile.csv [--top 30] [--width 90]
"""
import argparse
import collections
import csv
import io


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--width", type=int, default=90)
    arguments = parser.parse_args()
    with open(arguments.csv, encoding="utf-8", errors="replace") as source:
        lines = [line for line in source if line.startswith('"')]
    totals, counts = collections.Counter(), collections.Counter()
    for row in csv.DictReader(io.StringIO("".join(lines))):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        name = row["Kernel Name"][:arguments.width]
        totals[name] += float(row["Metric Value"].replace(",", "")) / 1e3  # ns -> us
        counts[name] += 1
    everything = sum(totals.values())
    print(f"{sum(counts.values())} kernels, {everything / 1e3:.3f} ms of GPU time")
    print(f"{'us':>10} {'share':>6} {'count':>6}  kernel")
    for name, total in totals.most_common(arguments.top):
        print(f"{total:>10.1f} {100 * total / max(everything, 1e-9):>5.1f}% {counts[name]:>6}  {name}")


if __name__ == "__main__":
    main()
