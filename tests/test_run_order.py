"""run_job in the stage order ARCHITECTURE.md documents, each check once (issue #35).

job (the file's rules, the model resolved, its FLOPs counted) -> trace -> analysis -> hardware -> checks ->
report. `mfu run` and batches check a job with load_checked and then run it: the job-file rules used to run
twice (load_checked, then run_job again). A job from load_job alone is checked by run_job, once.
"""

from __future__ import annotations

import pytest

from pipeline import run
from pipeline.job.config import load_job
from test_run_synth import write_job

STAGES = [("job_problems", run, "job_problems"), ("job_flops", run, "job_flops"),
          ("open_set", run.ranks, "open_set"), ("analyse_set", run.ranks, "analyse_set"),
          ("resolve_job_peak", run, "resolve_job_peak"), ("gpu_scope", run.scope, "gpu_scope"),
          ("numerator_agrees", run.scope, "numerator_agrees"), ("verdict", run.plausibility, "verdict"),
          ("build", run.result, "build")]


@pytest.fixture
def calls(monkeypatch):
    """The order in which run's stages were entered, each by its name in STAGES."""
    seen: list[str] = []
    for label, module, name in STAGES:
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _real=real, _label=label, **k: seen.append(_label)
                            or _real(*a, **k))
    return seen


ORDER = ["job_problems", "job_flops", "open_set", "analyse_set", "resolve_job_peak", "gpu_scope",
         "numerator_agrees", "verdict", "build"]


def test_a_checked_job_runs_each_stage_once_in_order(synth_trace, tmp_path, calls):
    trace, _ = synth_trace()
    job = run.load_checked(write_job(tmp_path, trace))
    run.run_job(job)
    assert calls == ORDER


def test_a_job_from_load_job_is_checked_by_run_job_once(synth_trace, tmp_path, calls):
    trace, _ = synth_trace()
    run.run_job(load_job(write_job(tmp_path, trace)))
    assert calls == ORDER
