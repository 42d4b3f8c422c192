#!/usr/bin/env python3
"""Prints a Markdown table of JMH JSON results: the average time per decision (score and
error as JMH reports them, then the median and range of the measured iterations), the CPU
time per decision from CpuTimeProfiler, bytes allocated per decision, and each row's ratio
to a reference benchmark's median CPU time within the same file and load.

    python3 benchmarks/jmh-summary.py RESULT.json [REFERENCE_METHOD]
"""
import json
import statistics
import sys


def median_range(values):
    return statistics.median(values), min(values), max(values)


def main():
    path = sys.argv[1]
    reference = sys.argv[2] if len(sys.argv) > 2 else "bucket4jLockFree"
    rows = []
    for result in json.load(open(path)):
        name = result["benchmark"].rsplit(".", 1)[1]
        load = result.get("params", {}).get("load", "")
        primary = result["primaryMetric"]
        times = [v for fork in primary["rawData"] for v in fork]
        secondary = result.get("secondaryMetrics", {})
        cpu = [v for fork in secondary.get("cpu.ns/op", {}).get("rawData", []) for v in fork]
        alloc = secondary.get("gc.alloc.rate.norm", {}).get("score", float("nan"))
        rows.append((load, name, result["threads"], primary["score"], primary["scoreError"],
                     median_range(times), median_range(cpu) if cpu else None, alloc))
    cpu_reference = {row[0]: row[6][0] for row in rows if row[1] == reference and row[6]}
    print("| load | benchmark | threads | avgt ns/op (score ± error) | avgt median [min–max] "
          "| CPU ns/op median [min–max] | CPU vs %s | B/op |" % reference)
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for load, name, threads, score, error, times, cpu, alloc in sorted(rows):
        cpu_cell = "%.0f [%.0f–%.0f]" % cpu if cpu else "–"
        ratio = "%.2f" % (cpu[0] / cpu_reference[load]) if cpu and load in cpu_reference else "–"
        print("| %s | %s | %d | %.0f ± %.0f | %.0f [%.0f–%.0f] | %s | %s | %.0f |"
              % (load, name, threads, score, error, *times, cpu_cell, ratio, alloc))


if __name__ == "__main__":
    main()
