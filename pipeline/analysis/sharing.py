"""One window for the jobs of a batch that would each build the same one (issue #10).

Building a window (measure.build_window: selection, attribution, memory operations,
classification) is the part of a job that reads the trace; analysing it reads only the
window tables. Jobs on one trace file whose build reads the same inputs (`key`) get one
window over every occurrence any of them selects (the earliest first .. the latest last),
and each job analyses the rows of its own occurrences (window_cut.sql), their unions cut from
one sort of the whole window (trace/unions.py `cut`), their times per kernel name from one pass
(name_times.sql), their steps' parts from the window's steps cut once
(step_share.sql): a job cuts only the steps of its own that come out otherwise (step_redo.sql: its
last, whose step is its wall, and one another occurrence's work ran into), their rows that end before
they start from one scan (backwards_kernels.sql, per occurrence), their timeline step's rows from
window_unions' sort (measure.SortedRows, timeline.py), their figures per occurrence, device and rank
from the window's (occurrence_cut.sql, measure.OCCURRENCE_ROWS), whether its kernels are placed in operators
from its occurrences' counts (SharedWindow.places_kernels); jobs selecting the same occurrences (other
models or GPUs on the same steps) are analysed once (SharedWindow.analyse). Occurrences are
numbered per process over every matching range, whatever the selection, and an occurrence's
rows do not depend on which others were selected (tests/test_shared_window.py): each job's
figures are those of its own run, byte for byte.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Hashable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pipeline.analysis import classes, merged, ranks
from pipeline.analysis.measure import (OCCURRENCE_ROWS, SHARED_MADE, MissingOccurrences, SortedRows, Window,
                                      build_inputs, occurrence_range, places)
from pipeline.job.config import FigureRow, Job, Region
from pipeline.trace import chain, queries

if TYPE_CHECKING:
    from pipeline.trace.unions import Sorted    # numpy: imported where unions are computed (trace/queries.py)


def key(job: Job, rules: list[classes.Rule]) -> Hashable | None:
    """What building the job's window reads besides its occurrences; None: the job builds its own.

    ranks.build_set reads the trace file, the region but its occurrences, the attribution asked
    for and classify.sql's parameters (class rules, job's first, then the precision rules). Several
    files are not shared: their labels, per-file occurrence checks and combination are per job.
    """
    files = job.trace_files()
    if len(files) != 1:
        return None
    return (str(files[0]), *build_inputs(job.region, classes.classify_params(rules)))


def clusters(jobs: list[Job]) -> list[list[Job]]:
    """The jobs (of one key) in runs whose one window holds no more occurrences than their own windows.

    One window for occurrences 1-2 and 9,999-10,000 would attribute the 9,996 between them.
    Jobs reading to the last occurrence share one window from the earliest of their firsts, with
    every job whose occurrences lie inside it. The others go by first occurrence: a job joins
    the run while the run's span stays within the sum of its jobs' spans.
    """
    open_ended = [j for j in jobs if j.region.last is None]
    start = min((j.region.first for j in open_ended), default=None)
    inside = [j for j in jobs if start is not None and j.region.last is not None and j.region.first >= start]
    out = [open_ended + inside] if open_ended else []
    run: list[Job] = []
    lo = hi = spans = 0
    bounded = [(j.region.first, j.region.last, j) for j in jobs if j.region.last is not None and j not in inside]
    for first, last, j in sorted(bounded, key=lambda b: (b[0], b[1])):
        if run and max(hi, last) - lo + 1 <= spans + last - first + 1:
            run.append(j)
            hi, spans = max(hi, last), spans + last - first + 1
            continue
        if run:
            out.append(run)
        run, lo, hi, spans = [j], first, last, last - first + 1
    return out + ([run] if run else [])


@dataclass
class SharedWindow:
    """A window built for several jobs, kept as shared_* tables on the trace set's connection until `close`."""

    ts: ranks.TraceSet
    built: ranks.SetWindow
    unions: Sorted                         # window_unions.sql's intervals, sorted once for every job
    comms: Sorted                          # comm_unions.sql's
    places: dict[int, dict[str, Any]]      # per occurrence, its operator ranges and labels (window_share.sql)
    done: dict[tuple[int, int, str], tuple[ranks.SetMeasurement, dict[str, Any]]] = field(default_factory=dict)

    def cut(self, job: Job) -> ranks.SetWindow:
        """The job's own window: its occurrences checked as its own build would, their rows as the window tables."""
        window = self.built.window
        first, last = occurrence_range(self.ts.traces[0], job.region, window.counts_per_process)
        queries.run(self.ts.con, "window_cut", first=first, last=last, place=self.places_kernels(first, last))
        queries.store_cut(self.ts.con, "window_unions", self.unions, first, last)
        queries.store_cut(self.ts.con, "comm_unions", self.comms, first, last)
        own = replace(window, first=first, last=last, made=SHARED_MADE,
                      unattributed={k: u for k, u in window.unattributed.items() if first <= k <= last},
                      backwards=[r for r in window.backwards or [] if first <= r["occurrence"] <= last],
                      rows=SortedRows(self.unions),
                      occurrence_rows=None if window.occurrence_rows is None else {
                          name: [r for r in found if first <= r["occurrence"] <= last]
                          for name, found in window.occurrence_rows.items()})
        label = job.file_label(self.ts.paths[0])
        return replace(self.built, window=own, files=[{**self.built.files[0], "label": label}], labels=[label])

    def places_kernels(self, first: int, last: int) -> bool:
        """Whether the job's own window over first..last would place kernels in operators (measure.places, from
        its occurrences' counts): the window decided it over every job's occurrences, and one occurrence's operator
        range or second label placed the kernels of every job, which alone had none (counted FLOPs' coverage)."""
        mine = [p for k, p in self.places.items() if first <= k <= last]
        return places({"operators": sum(p["operators"] for p in mine),
                       "labels": len({label for p in mine for label in p["labels"] or []})})

    def analyse(self, built: ranks.SetWindow,
                figures: list[FigureRow]) -> tuple[ranks.SetMeasurement, dict[str, Any]]:
        """ranks.analyse_set of a cut window, once per occurrence range, file entries and figures asked.

        Jobs selecting the same occurrences (the same steps judged against other models or GPUs) analyse
        the same rows: the analyses read only the cut's tables, its Window and those inputs, so a later
        job gets a copy of the first one's figures (a copy: the run goes on to fill them in per job).
        """
        if built.kept is not None:
            return ranks.analyse_set(self.ts, built, figures)
        key = (built.window.first, built.window.last,
               json.dumps([built.files, built.labels, figures], sort_keys=True, default=str))
        if key in self.done:
            return copy.deepcopy(self.done[key])
        found = ranks.analyse_set(self.ts, built, figures)
        self.done[key] = copy.deepcopy(found)
        return found

    def serving(self) -> AbstractContextManager[None]:
        """While the jobs are cut and analysed: one DuckDB thread (merged.one_thread). A job's own statements
        read the window's small tables (per occurrence, device, name; its unions cut in numpy), about 30 of
        1-10 ms each, and a second thread only added CPU to them: 20-job batch at 2 M kernels, its jobs'
        statements 1.5-2.0 -> 1.2-1.5 CPU s summed, the process 7.8-9.6 -> 7.3-8.5 (load 8-10)."""
        return merged.one_thread(self.ts.con)

    def close(self) -> None:
        """Drop the shared tables and the job views: the connection's next job builds its own window."""
        queries.run(self.ts.con, "window_unshare")


def build(ts: ranks.TraceSet, jobs: list[Job], rules: list[classes.Rule]) -> SharedWindow:
    """One window over every occurrence of `jobs` (equal keys); raises what building it raises.

    Jobs asking for occurrences the trace lacks are left out of it (each meets its own error
    when cut), so they do not cost the others their shared window.
    """
    try:
        built = ranks.build_set(ts, replace(jobs[0], region=_spanning(jobs)), rules)
    except MissingOccurrences as exc:
        fit = [j for j in jobs if j.region.first <= exc.most and (j.region.last or exc.most) <= exc.most]
        if not fit or len(fit) == len(jobs):
            raise
        built = ranks.build_set(ts, replace(jobs[0], region=_spanning(fit)), rules)
    unions = queries.sort_unions(ts.con, "window_unions", "occurrence", comm_class=classes.COMM_CLASS)
    comms = queries.sort_unions(ts.con, "comm_unions", "occurrence", comm_class=classes.COMM_CLASS)
    _share_steps(ts, built.window, unions)
    per = {name: queries.run(ts.con, name) for name in OCCURRENCE_ROWS}      # the whole window's, as _share_steps left it
    built = replace(built, window=replace(built.window, backwards=queries.run(ts.con, "backwards_kernels"),
                                          occurrence_rows=per))
    queries.run(ts.con, "name_times")
    placed = {r["occurrence"]: r for r in queries.run(ts.con, "window_share")}
    return SharedWindow(ts, built, unions, comms, placed)


def _share_steps(ts: ranks.TraceSet, window: Window, unions: Sorted) -> None:
    """Every step of the window cut once (step_share.sql, over the window's own occurrence_times.sql), so
    that each job cuts only the steps of its own that differ (classes.step_parts)."""
    queries.store_cut(ts.con, "window_unions", unions, window.first, window.last)
    chain.run(ts.con, {"kernel_union", "occurrence_times", "step_rows", "step_unions", "step_share"},
              **classes.step_params())


def _spanning(jobs: list[Job]) -> Region:
    """The region of the jobs' window: the earliest first .. the latest last (None: to the last occurrence)."""
    lasts = [j.region.last for j in jobs if j.region.last is not None]
    return replace(jobs[0].region, first=min(j.region.first for j in jobs),
                   last=None if len(lasts) < len(jobs) else max(lasts))
