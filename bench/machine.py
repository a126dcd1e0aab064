"""The machine a benchmark ran on, measured when it runs: what every report records as its "machine".

`describe()` gives the parts (CPU model, cores this process may use, memory, load, Python), `line()` the one line
reports print and store. Outside Linux the parts /proc would give fall back to what `platform` and `os` know.
"""
from __future__ import annotations

import os
import platform
from pathlib import Path

GIB = 1 << 30


def cores() -> int:
    """The cores this process may run on (its affinity: fewer than the machine's under a container's or taskset's
    limit)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def cpu_model() -> str:
    """The CPU's model name with its family and model numbers (/proc/cpuinfo: a VM may name only "AMD EPYC", which
    covers generations twice as fast as each other), else what `platform` knows."""
    fields = {}
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            name, _, value = line.partition(":")
            if not name.strip():
                break  # the first processor's lines end here
            fields.setdefault(name.strip(), value.strip())
    except OSError:
        pass
    if "model name" not in fields:
        return platform.processor() or platform.machine() or "unknown CPU"
    numbers = [f"{label} {fields[key]}" for key, label in (("cpu family", "family"), ("model", "model"))
               if key in fields]
    return f"{fields['model name']} ({', '.join(numbers)})" if numbers else fields["model name"]


def meminfo_bytes(field: str = "MemTotal") -> int | None:
    """A line of /proc/meminfo (MemTotal, MemAvailable, ...) in bytes; None where there is no such line."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if field == "MemTotal":
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            pass
    return None


def load() -> float | None:
    """The one-minute load average (other jobs on a shared machine show here)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def describe() -> dict:
    """The machine now: cpu, arch, cores, memory_gib, load (one-minute average), python."""
    memory = meminfo_bytes("MemTotal")
    return {"cpu": cpu_model(), "arch": platform.machine(), "cores": cores(),
            "memory_gib": round(memory / GIB, 1) if memory else None, "load": load(),
            "python": platform.python_version()}


def line(info: dict | None = None) -> str:
    """One line, e.g. "AMD EPYC (x86_64), 2 cores, 23.5 GiB, load 0.96, Python 3.11.7"."""
    info = info or describe()
    parts = [f"{info['cpu']} ({info['arch']})", f"{info['cores']} cores"]
    if info["memory_gib"] is not None:
        parts.append(f"{info['memory_gib']} GiB")
    if info["load"] is not None:
        parts.append(f"load {info['load']:.2f}")
    return ", ".join(parts + [f"Python {info['python']}"])


if __name__ == "__main__":
    print(line())
