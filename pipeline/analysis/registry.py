"""Every analysis of the window, registered once: its result.json key, what computes it, what shows it.

`measure_all` runs the entries in order while the window's tables exist (ranks.analyse_set),
result.build writes each key as it came (report/result.py), and the report pages show each
entry: through the hand-written partial it names (`_where`, `_timeline`: several sections drawn
together), or through its own `Section`, one table definition that render.section_tables turns
into the Markdown and the HTML table alike (templates `_sections.md.j2`, `_sections.html.j2`).

Adding an analysis (ARCHITECTURE.md "Where to add"): its SQL file(s) with a test each, one
module here in analysis/ with the function turning the rows into the section, one `Analysis`
below with its `Section`, and its key in schemas/result.schema.json with a description.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipeline.analysis import classes, communicators, counted, precision, streams, timeline
from pipeline.analysis.measure import Measurement
from pipeline.job.config import FigureRow
from pipeline.trace.open import Trace


@dataclass(frozen=True)
class Column:
    """One column of a section's table: the row field it prints, its header, and how a cell is written:
    "device" (the device as the Devices table labels it), "int" (a count), "s" (seconds, one unit per column),
    "ns" (integer nanoseconds, written as seconds are), "text" (a key written as it is, as an NCCL communicator ID)."""

    field: str
    header: str
    kind: str


@dataclass(frozen=True)
class Section:
    """How the report shows a section that is a list of rows: a heading (and its HTML anchor), a sentence
    saying what the rows are (`quoted` parts print as code), the columns, and the text when there is no row."""

    title: str
    anchor: str
    intro: str
    columns: tuple[Column, ...]
    empty: str


Compute = Callable[[Trace, Measurement, dict[str, Any]], Any]     # (window, measurement, earlier sections)


@dataclass(frozen=True)
class Analysis:
    """One result.json section computed from the window: `shown_by` is the partial that draws it among
    others, or its own Section."""

    key: str
    compute: Compute
    shown_by: str | Section


def _kernel_sum_ns(earlier: dict[str, Any]) -> int:
    """The summed time of every attributed kernel and memory operation: the top kernels' shares divide by it."""
    return classes.kernel_sum_ns(earlier["kernel_classes"])


ANALYSES: tuple[Analysis, ...] = (
    Analysis("kernel_classes", lambda trace, m, _: classes.kernel_classes(trace, m.totals["wall_ns"]), "_where"),
    Analysis("top_kernels", lambda trace, _, earlier: classes.top_kernels(trace, _kernel_sum_ns(earlier)), "_where"),
    Analysis("unclassified_kernels",
             lambda trace, _, earlier: classes.top_kernels(trace, _kernel_sum_ns(earlier), classes.OTHER_CLASS),
             "_where"),
    Analysis("gemm_precision", lambda trace, *_: precision.measure(trace, *classes.precision_inputs()), "_where"),
    Analysis("communication", lambda trace, m, _: classes.communication(trace, m), "_where"),
    Analysis("timeline", lambda trace, m, _: timeline.one_step(trace, m, classes.COMM_CLASS), "_timeline"),
    # the counted sums; run_job sets them beside the declared numerator and the peak (model/counted.py)
    Analysis("counted_flops", lambda trace, *_: counted.measure(trace), "_counted"),
    Analysis("stream_times", lambda trace, *_: streams.stream_times(trace), Section(
        "Time per CUDA stream", "streams",
        "Attributed kernels per device and CUDA stream (the export's `streamId`), over all selected occurrences: "
        "union is the time at least one of the stream's kernels ran, sum their durations added up. Memory "
        "copies and sets are not counted.",
        (Column("device_id", "device", "device"), Column("stream_id", "stream", "int"),
         Column("count", "kernels", "int"), Column("sum_s", "sum", "s"), Column("union_s", "union", "s")),
        "no attributed kernels")),
    Analysis("communicator_times",
             lambda trace, m, _: communicators.communicator_times(trace, classes.COMM_CLASS, m.made),
             Section(
        "Exposed communication per NCCL communicator", "communicators",
        "Communication kernels per device and NCCL communicator (the `NCCL communicator ID` of the NCCL call that "
        "launched them, from NCCL's NVTX ranges), over all selected occurrences: union is the time at least one "
        "ran, exposed the part of it with no compute kernel running on the device, hidden the part under one. "
        "Only kernels whose communicator the export records (such a range around their launch) are counted.",
        (Column("device_id", "device", "device"), Column("communicator", "communicator", "text"),
         Column("count", "kernels", "int"), Column("comm_s", "union", "s"), Column("exposed_s", "exposed", "s"),
         Column("hidden_s", "hidden", "s")),
        "no communicator known")),
    Analysis("step_parts", lambda trace, m, _: classes.step_parts(trace, m), Section(
        "What ran in each step", "step-parts",
        "Each occurrence's step cut into what ran in it on any GPU (docs/compare.md): communication alone "
        "(exposed), communication under compute, GEMM or convolution alone, attention alone, other compute "
        "alone, several compute groups at once, memory copies alone, idle; the parts add up to the step. "
        "`mfu compare` and `mfu history` decompose a step-time change from them.",
        (Column("occurrence", "occurrence", "int"), Column("step_ns", "step", "ns"),
         Column("comm_ns", "comm. exposed", "ns"), Column("comm_overlap_ns", "comm. under compute", "ns"),
         Column("gemm_ns", "GEMM", "ns"), Column("attention_ns", "attention", "ns"),
         Column("other_compute_ns", "other compute", "ns"), Column("mixed_compute_ns", "mixed compute", "ns"),
         Column("memory_ns", "memory", "ns"), Column("idle_ns", "idle", "ns")),
        "no selected occurrence")),
)


def measure_all(trace: Trace, m: Measurement, figures: list[FigureRow]) -> dict[str, Any]:
    """Every registered section, in order (an entry sees the ones before it), while the window's tables
    exist; and `figure_device_s`, the time of the kernels each user figure names (model/roofline's input,
    not a section of its own)."""
    sections: dict[str, Any] = {}
    for analysis in ANALYSES:
        sections[analysis.key] = analysis.compute(trace, m, sections)
    sections["figure_device_s"] = [classes.pattern_time(trace, f["kernels"])["device_union_s"]
                                   if "kernels" in f else None for f in figures]
    return sections
