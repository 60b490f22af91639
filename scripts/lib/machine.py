"""The line the benchmark scripts print first: when and on what machine
their numbers were measured, so a number copied into the README carries
its provenance."""

import os
import platform
import time


def header():
    """`# date, N CPUs (model), Linux release`."""
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"# {time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs ({model}), Linux {platform.release()}"
