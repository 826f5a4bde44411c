"""Every scope and plausibility rule, each a small function, in three modules by when run.run_job applies them.

- job_file: the job document's own rules, before any trace is opened (exit 3).
- scope: the job against what it measures: numerator vs architecture, GPUs, ranges, files (exit 3, 4, warnings).
- plausibility: figures that cannot be measurements (warnings, the `invalid` verdict) and the job's thresholds.
"""
