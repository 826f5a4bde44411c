"""Tiny hand-made Nsight Systems exports for the SQL tests.

Real table and column names (NSYS_SCHEMA.md), including columns the pipeline never
reads, and only the tables that hold rows — as `nsys export` does. Each test plants
a few events and writes down the expected numbers by hand.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.analysis import classes
from pipeline.trace import chain

PID_MASK = 0xFFFFFF

_DDL = {
    "StringIds": "id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL",
    "NVTX_EVENTS": "start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, "
                   "category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, "
                   "textId INTEGER, domainId INTEGER, uint64Value INTEGER, jsonText TEXT",
    "CUPTI_ACTIVITY_KIND_RUNTIME": "start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, "
                                   "globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, "
                                   "returnValue INTEGER NOT NULL, callchainId INTEGER",
    "CUPTI_ACTIVITY_KIND_KERNEL": "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
                                  "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, "
                                  "globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, "
                                  "mangledName INTEGER, gridX INTEGER, blockX INTEGER",
    "CUPTI_ACTIVITY_KIND_MEMCPY": "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
                                  "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, "
                                  "globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL",
    "CUPTI_ACTIVITY_KIND_MEMSET": "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
                                  "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, "
                                  "globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL",
    "CUPTI_ACTIVITY_KIND_GRAPH_TRACE": "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
                                       "contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, "
                                       "correlationId INTEGER, globalPid INTEGER, graphId INTEGER NOT NULL, "
                                       "graphExecId INTEGER NOT NULL",
    "TARGET_INFO_GPU": "vmId INTEGER, id INTEGER NOT NULL, name TEXT, busLocation TEXT, totalMemory INTEGER, "
                       "memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, chipName TEXT, "
                       "cuDevice INTEGER",
    "PROCESSES": "globalPid INTEGER, pid INTEGER, name TEXT",
    "META_DATA_EXPORT": "name TEXT, value TEXT",
}


def gpid(pid: int, host: int = 0) -> int:
    """Serialized process id: host/VM id in bits 48+, pid in bits 24..47."""
    return (host << 48) | (pid << 24)


def gtid(pid: int, tid: int, host: int = 0) -> int:
    """Serialized thread id: the process key plus the tid in the low 24 bits."""
    return gpid(pid, host) | tid


@dataclass
class Export:
    """Rows to write; strings are interned on demand like StringIds."""

    strings: dict[str, int] = field(default_factory=dict)
    nvtx: list[dict] = field(default_factory=list)
    runtime: list[dict] = field(default_factory=list)
    kernels: list[dict] = field(default_factory=list)
    memcpys: list[dict] = field(default_factory=list)
    memsets: list[dict] = field(default_factory=list)
    graphs: list[dict] = field(default_factory=list)
    gpus: list[dict] = field(default_factory=list)
    processes: list[dict] = field(default_factory=list)

    def sid(self, value: str) -> int:
        return self.strings.setdefault(value, len(self.strings) + 1)

    def range(self, start: int, end: int | None, tid: int, name: str, *, via_text_id: bool = False,
              event_type: int = 59, domain_id: int = 0, json_text: str | None = None) -> None:
        """An NVTX event named by `text`, or by `textId` into StringIds; `json_text`: its payload as exported."""
        self.nvtx.append({"start": start, "end": end, "eventType": event_type, "globalTid": tid,
                          "domainId": domain_id, "text": None if via_text_id else name,
                          "textId": self.sid(name) if via_text_id else None, "jsonText": json_text})

    def nccl(self, start: int, end: int, tid: int, name: str, comm: int | None, domain_id: int = 1) -> None:
        """A range NCCL records itself (its domain, named by `domain`), as NCCL 2.x exports it: the payload
        '{"NCCL communicator ID":<commHash>,"Message size [bytes]":...}', none when `comm` is None."""
        payload = None if comm is None else f'{{"NCCL communicator ID":{comm},"Message size [bytes]":4}}'
        self.range(start, end, tid, name, via_text_id=True, domain_id=domain_id, json_text=payload)

    def domain(self, tid: int, domain_id: int, name: str, *, via_text_id: bool = False) -> None:
        """eventType 75: names `domain_id` within the process of `tid`."""
        self.range(0, None, tid, name, via_text_id=via_text_id, event_type=75, domain_id=domain_id)

    def launch(self, start: int, tid: int, corr: int, name: str = "cudaLaunchKernel", dur: int = 5) -> None:
        self.runtime.append({"start": start, "end": start + dur, "eventClass": 1, "globalTid": tid,
                             "correlationId": corr, "nameId": self.sid(name), "returnValue": 0})

    def kernel(self, start: int, end: int, pid_key: int | None, corr: int | None, *, device: int = 0,
               stream: int = 7, name: str = "gemm") -> None:
        self.kernels.append({"start": start, "end": end, "deviceId": device, "contextId": 1,
                             "streamId": stream, "correlationId": corr, "globalPid": pid_key,
                             "demangledName": self.sid("void " + name + "()"), "shortName": self.sid(name)})

    def memory(self, start: int, end: int, pid_key: int | None, corr: int | None, *, device: int = 0,
               stream: int = 7, kind: str = "memcpy") -> None:
        """A memory copy (copyKind 8: device to device) or, kind 'memset', a memory set of 64 bytes."""
        row = {"start": start, "end": end, "deviceId": device, "contextId": 1, "streamId": stream,
               "correlationId": corr, "globalPid": pid_key, "bytes": 64}
        if kind == "memset":
            self.memsets.append({**row, "value": 0})
        else:
            self.memcpys.append({**row, "copyKind": 8})

    def graph(self, start: int, end: int, pid_key: int | None, corr: int | None, graph_id: int, *, device: int = 0,
              stream: int = 7) -> None:
        """One CUDA graph launch recorded whole (--cuda-graph-trace=graph): its kernels have no rows."""
        self.graphs.append({"start": start, "end": end, "deviceId": device, "contextId": 1, "streamId": stream,
                            "correlationId": corr, "globalPid": pid_key, "graphId": graph_id,
                            "graphExecId": graph_id + 100})

    def write(self, path: Path) -> Path:
        """Create only the tables that have rows (StringIds always), like `nsys export`."""
        rows = {"StringIds": [{"id": i, "value": v} for v, i in self.strings.items()],
                "NVTX_EVENTS": self.nvtx, "CUPTI_ACTIVITY_KIND_RUNTIME": self.runtime,
                "CUPTI_ACTIVITY_KIND_KERNEL": self.kernels, "CUPTI_ACTIVITY_KIND_MEMCPY": self.memcpys,
                "CUPTI_ACTIVITY_KIND_MEMSET": self.memsets, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE": self.graphs,
                "TARGET_INFO_GPU": self.gpus,
                "PROCESSES": self.processes,
                "META_DATA_EXPORT": [{"name": "EXPORT_SCHEMA_VERSION", "value": "3.25.0"}]}
        con = sqlite3.connect(path)
        try:
            for table, table_rows in rows.items():
                if not table_rows and table != "StringIds":
                    continue
                con.execute(f"CREATE TABLE {table} ({_DDL[table]})")
                for row in table_rows:
                    cols = ", ".join(f'"{c}"' for c in row)
                    marks = ", ".join("?" for _ in row)
                    con.execute(f"INSERT INTO {table} ({cols}) VALUES ({marks})", tuple(row.values()))
            con.commit()
        finally:
            con.close()
        return path


def two_rank_steps() -> Export:
    """Two ranks, `step` ranges; the numbers the time tests expect are worked out beside each test.

    pid 100: step 1 = 1000..2000, step 2 = 5000..6000 (no kernels)
             kernels on device 0: 1200..1500, 1400..1800, 2000..2600 (launched at 1900, ends after the range)
    pid 200: step 1 = 1100..2300; kernel on device 1: 1300..1700; its correlationId 1 repeats pid 100's
    """
    e = Export()
    a_main, b_main, a, b = gtid(100, 100), gtid(200, 200), gpid(100), gpid(200)
    e.range(1000, 2000, a_main, "step")
    e.range(5000, 6000, a_main, "step")
    e.range(1100, 2300, b_main, "step")
    for corr, launch, start, end in ((1, 1100, 1200, 1500), (2, 1200, 1400, 1800), (3, 1900, 2000, 2600)):
        e.launch(launch, a_main, corr)
        e.kernel(start, end, a, corr)
    e.launch(1150, b_main, 1)
    e.kernel(1300, 1700, b, 1, device=1)
    return e


def overlapping_steps() -> Export:
    """One process whose CPU runs ahead: each step's GPU work runs into the next step (docs/figures.md §6).

    pid 100, `step` ranges 0..1000, 1000..2000, 2000..3000 (back to back)
      step 1: launch at 100, kernel 200..1800 on device 0 (runs 800 ns into step 2)
      step 2: launch at 1100, kernel 1500..2600 on device 1 (beside step 1's kernel)
      step 3: launch at 2100, kernel 2600..3500 on device 0
    Envelopes 0..1800, 1000..2600, 2000..3500: sum 4900, union 3500.
    """
    e = Export()
    main, key = gtid(100, 100), gpid(100)
    for k, (launch, start, end, device) in enumerate(((100, 200, 1800, 0), (1100, 1500, 2600, 1),
                                                       (2100, 2600, 3500, 0)), start=1):
        e.range((k - 1) * 1000, k * 1000, main, "step")
        e.launch(launch, main, k)
        e.kernel(start, end, key, k, device=device)
    return e


def attribute(con, name: str, first: int, last: int, *, match: str = "exact") -> None:
    """The window by process attribution, then its unions up to kernel_union, in the order the SQL
    headers give (trace/chain.py)."""
    chain.run(con, {"region_ranges", "select_occurrences", "nccl_ranges", "attribute_launch", "attribute_memops",
                    "duplicate_kernels",
                    "classify", "window_unions", "kernel_union"},
              name=name, match=match, domain=None, first=first, last=last, same_thread=False, mode="process",
              comm_class=classes.COMM_CLASS, **classes.classify_params(classes.load_rules()))
