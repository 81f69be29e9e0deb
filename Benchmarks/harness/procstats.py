"""CPU time and peak memory of the processes a benchmark case exercises, read from /proc."""
from __future__ import annotations

import os
import pathlib

TICKS = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may hold spaces; the fields after it start at the state (field 3).
    return text[text.rindex(")") + 2:].split()


def cpu_seconds(pid: int, with_children: bool = False) -> float:
    """User + system CPU of `pid` (plus its exited, waited-for children when asked)."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if with_children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICKS


def children(parent: int) -> list[int]:
    """The live processes whose parent is `parent`."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields is not None and int(fields[1]) == parent:
                found.append(int(entry.name))
    return found


def status_mib(pid: int, field: str) -> float:
    """A size field of the process's /proc status (`VmHWM`, `VmRSS`) in MiB, 0 if it is gone."""
    try:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def peak_rss_mib(pid: int) -> float:
    """The process's peak resident set (VmHWM) in MiB, 0 if it is gone."""
    return status_mib(pid, "VmHWM")


class ProcessGroup:
    """One measured party: a single process, or a PostgreSQL postmaster and its backends
    (CPU summed over all of them, including backends that exited; peak RSS of the largest)."""

    def __init__(self, name: str, pid: int, tree: bool = False):
        self.name, self.pid, self.tree = name, pid, tree

    @property
    def label(self) -> str:
        """The name peak RSS is reported under."""
        return f"{self.name} (largest process)" if self.tree else self.name

    def cpu(self) -> float:
        if not self.tree:
            return cpu_seconds(self.pid)
        return cpu_seconds(self.pid, with_children=True) + sum(cpu_seconds(child) for child in children(self.pid))

    def peak_rss(self) -> float:
        if not self.tree:
            return peak_rss_mib(self.pid)
        return max([peak_rss_mib(self.pid)] + [peak_rss_mib(child) for child in children(self.pid)])
