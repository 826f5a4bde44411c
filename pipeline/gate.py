"""Noise-aware regression decisions, shared by `mfu compare` and `mfu history`.

A change fails only when it is practically large (beyond the allowed share of the
baseline's value) AND statistically clear: a one-sided Mann–Whitney U test on the
per-occurrence samples at ALPHA. With fewer than MIN_SAMPLES on a side no test is
run and the outcome is "undecided" (a failure only when strict).

Limit: per-occurrence samples measure the jitter inside one run, not the variation
between runs (another node, another clock, another neighbour on a shared runner). A
test on one baseline run can therefore call a run-to-run shift "clear". Several
baseline runs show that variation: their samples are pooled, and a change inside the
range the baseline runs span is never called a regression.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any


ALPHA = 0.01
MIN_SAMPLES = 5
EXACT_MAX_PAIRS = 10_000       # exact distribution without ties up to m·n pairs (O(m²n) integer additions)
EXACT_MAX_TIED = 40            # exact distribution with ties up to this many samples in all


# The per-occurrence figure a sample is, by the field step_samples reads, as the pages name it (the report's
# "Step time per occurrence"): the test's sentence is read by people, on stderr and the pages; the JSON keeps the field.
SAMPLE_NAMES = {"step_time_s": "step time per occurrence", "wall_time_s": "wall time per occurrence"}


def _sampled(metric: str, field: str) -> str:
    """What a gated figure's test ran on, as the pages name it: MFU's samples are the MFU per occurrence (mfu_samples),
    not the step times they come from, which differ from them in rank when the runs' FLOPs or GPUs differ."""
    return "MFU per occurrence (from the wall time per occurrence)" if metric == "mfu_pct_wall" else SAMPLE_NAMES[field]


def step_samples(result: dict[str, Any]) -> tuple[str, list[float]]:
    """Per-occurrence step times of a result: `step_time_s`, or `wall_time_s` where a result predates it.

    The one place that decides which per-occurrence figure is a step-time sample; returns
    (field name, values in occurrence order).
    """
    occ = result.get("occurrences") or []
    key = "step_time_s" if occ and all(o.get("step_time_s") is not None for o in occ) else "wall_time_s"
    return key, [float(o[key]) for o in occ if o.get(key) is not None]


def mfu_samples(result: dict[str, Any]) -> list[float]:
    """Per-occurrence MFU as the result prints it (occurrences[].mfu_pct_wall, from each occurrence's wall time):
    the figure the report shows is the figure tested, not a second computation from the step time, which
    differs from it wherever an occurrence's step is shorter than its wall (CPU running ahead). An occurrence
    without one (no peak, no FLOPs) gives no sample."""
    return [float(o["mfu_pct_wall"]) for o in result.get("occurrences") or [] if o.get("mfu_pct_wall") is not None]


def u_statistic(x: Sequence[float], y: Sequence[float]) -> tuple[float, bool]:
    """U of x: pairs (x_i, y_j) with x_i > y_j, ties counting one half (Mann & Whitney 1947); and whether ties exist.

    Computed from mid-ranks of the pooled sample: U = R_x - m(m+1)/2.
    """
    pooled = sorted([(v, 0) for v in x] + [(v, 1) for v in y])
    rank_sum, ties, i = 0.0, False, 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        ties = ties or j > i
        mid = (i + j) / 2 + 1
        rank_sum += mid * sum(1 for k in range(i, j + 1) if pooled[k][1] == 0)
        i = j + 1
    return rank_sum - len(x) * (len(x) + 1) / 2, ties


def u_counts(m: int, n: int) -> list[int]:
    """How many of the C(m+n, m) orderings give U = 0..m·n: the coefficients of the Gaussian binomial [m+n, m]_q.

    Mann & Whitney (1947); product form prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), done in exact
    integers on power series truncated after q^(m·n) (the result is a polynomial of that degree).
    """
    top = m * n
    c = [1] + [0] * top
    for i in range(1, m + 1):
        for k in range(top, n + i - 1, -1):
            c[k] -= c[k - n - i]
        for k in range(i, top + 1):
            c[k] += c[k - i]
    return c


def mann_whitney_greater(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """One-sided Mann–Whitney U test of "x tends to be larger than y".

    Exact null distribution for small samples: u_counts without ties (up to EXACT_MAX_PAIRS pairs),
    tied_rank_sums with ties (up to EXACT_MAX_TIED samples); otherwise the normal approximation
    with tie and continuity corrections (Hollander & Wolfe, Nonparametric Statistical Methods,
    3rd ed., §4.1). effect_size is U/(m·n), the probability that an x exceeds a y (ties half):
    0.5 means no shift, 1.0 every x above every y.
    """
    m, n = len(x), len(y)
    u, ties = u_statistic(x, y)
    if not ties and m * n <= EXACT_MAX_PAIRS:
        counts = u_counts(m, n)
        p, method = sum(counts[math.ceil(u):]) / math.comb(m + n, m), "exact"
    elif ties and m + n <= EXACT_MAX_TIED:
        sums = tied_rank_sums(list(x) + list(y), m)
        least = round(2 * u + m * (m + 1))            # doubled rank sum of x: 2U + m(m+1)
        p, method = sum(c for s, c in sums.items() if s >= least) / math.comb(m + n, m), "exact (ties)"
    else:
        p, method = _normal_p(x, y, u), "normal approximation"
    return {"u": u, "p_value": min(1.0, p), "method": method, "effect_size": u / (m * n),
            "n_value": m, "n_baseline": n}


def tied_rank_sums(pooled: Sequence[float], m: int) -> dict[int, int]:
    """Doubled mid-rank sum -> number of the C(N, m) subsets of size m with it: the permutation
    distribution of the rank sum given the ties (Hollander & Wolfe §4.1, exact conditional test).

    Tie groups are chosen from whole: j of a group of t adds j x its doubled mid-rank, C(t, j) ways.
    """
    values = sorted(pooled)
    groups, i = [], 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[i]:
            j += 1
        groups.append((j - i + 1, i + j + 2))          # (size, doubled mid-rank of 1-based ranks)
        i = j + 1
    ways: list[dict[int, int]] = [{0: 1}] + [{} for _ in range(m)]
    for size, rank2 in groups:
        new: list[dict[int, int]] = [{} for _ in range(m + 1)]
        for k, sums in enumerate(ways):
            for s, c in sums.items():
                for j in range(min(size, m - k) + 1):
                    key = s + j * rank2
                    new[k + j][key] = new[k + j].get(key, 0) + c * math.comb(size, j)
        ways = new
    return ways[m]


def _normal_p(x: Sequence[float], y: Sequence[float], u: float) -> float:
    m, n = len(x), len(y)
    total = m + n
    groups: dict[float, int] = {}
    for v in list(x) + list(y):
        groups[v] = groups.get(v, 0) + 1
    tie_term = sum(t ** 3 - t for t in groups.values()) / (total * (total - 1))
    var = m * n / 12 * ((total + 1) - tie_term)
    if var <= 0:
        return 1.0
    z = (u - m * n / 2 - 0.5) / math.sqrt(var)
    return 0.5 * math.erfc(z / math.sqrt(2))


def decide(change_pct: float, better: str, limit_pct: float, value_samples: Sequence[float],
           base_samples: Sequence[float], strict: bool = False, alpha: float = ALPHA, value: float | None = None,
           base_values: Sequence[float] = ()) -> dict[str, Any]:
    """Outcome of one gated figure: pass, fail or undecided, the reason's code and the test behind it.

    `change_pct` is the signed relative change against the baseline; `better` the figure's
    direction ("higher" or "lower"). Worse by at most the limit passes without a test; so does
    a value inside the range several baseline runs span (run-to-run noise).
    """
    worse_pct = -change_pct if better == "higher" else change_pct
    if worse_pct <= limit_pct:
        return {"outcome": "pass", "reason": "within_limit", "test": None}
    if len(base_values) >= 2 and value is not None and min(base_values) <= value <= max(base_values):
        return {"outcome": "pass", "reason": "within_baseline_runs", "test": None}
    if min(len(value_samples), len(base_samples)) < MIN_SAMPLES:
        return {"outcome": "fail" if strict else "undecided", "reason": "too_few_samples", "test": None}
    sign = -1.0 if better == "higher" else 1.0         # test "worse": larger time, smaller MFU
    test = mann_whitney_greater([sign * v for v in value_samples], [sign * v for v in base_samples])
    test["alpha"] = alpha
    clear = test["p_value"] < alpha
    return {"outcome": "fail" if clear else "pass", "reason": "clear" if clear else "not_clear", "test": test}


def verdict(change: float | None, better: str) -> str | None:
    """'better', 'worse' or 'same' for a signed change of a figure with this direction; None without one."""
    if change is None or better == "none":
        return None
    if change == 0:
        return "same"
    return "better" if (change > 0) == (better == "higher") else "worse"


def detect(change_pct: float, better: str, min_change_pct: float, now: Sequence[float],
           before: Sequence[float], field: str = "step_time_s", alpha: float = ALPHA,
           metric: str = "step_time_median_s") -> dict[str, Any]:
    """A change between two runs in either direction: regression, improvement, undecided or none.

    The same rule as the gate, both ways: at least `min_change_pct` and statistically clear in the
    direction of the change (one-sided Mann–Whitney U at alpha); too few samples: undecided.
    """
    word = verdict(change_pct, better)
    if abs(change_pct) <= min_change_pct or word == "same":
        return {"outcome": "none", "verdict": word, "test": None, "detail": ""}
    head = f"{change_text(change_pct, word)} since the previous valid run"
    if min(len(now), len(before)) < MIN_SAMPLES:
        return {"outcome": "undecided", "verdict": word, "test": None,
                "detail": f"{head}: cannot decide, {len(now)} sample(s) here and {len(before)} before "
                          f"(a test needs at least {MIN_SAMPLES} on each side)"}
    sign = -1.0 if better == "higher" else 1.0           # larger = worse
    x, y = [sign * v for v in now], [sign * v for v in before]
    test = mann_whitney_greater(x, y) if word == "worse" else mann_whitney_greater(y, x)
    test["alpha"] = alpha
    if test["p_value"] >= alpha:
        return {"outcome": "none", "verdict": word, "test": test, "detail": ""}
    return {"outcome": "regression" if word == "worse" else "improvement", "verdict": word, "test": test,
            "detail": f"{head}: statistically clear ({_stat(test, _sampled(metric, field))} < {alpha:g})"}


def _stat(t: dict[str, Any], samples: str) -> str:
    return (f"one-sided Mann–Whitney U = {t['u']:g}, {t['method']}, n = {t['n_value']} vs {t['n_baseline']} "
            f"samples of the {samples}, effect size {t['effect_size']:.2f}, "
            f"p = {t['p_value']:.3g}")   # p last: '< alpha' follows


def change_text(change_pct: float, verdict: str | None) -> str:
    """A signed relative change with its word: '+10.00 % (worse)'; the one wording for every output."""
    return f"{change_pct:+.2f} %" + (f" ({verdict})" if verdict else "")


def describe(e: dict[str, Any], d: dict[str, Any]) -> str:
    """One sentence for a gated figure; `e` holds metric, change_pct, verdict, limit_pct, samples, run_to_run_pct."""
    head = f"{change_text(e['change_pct'], e['verdict'])}, limit {e['limit_pct']:g} % worse"
    n = e["samples"]
    if d["reason"] == "within_limit":
        return head + ": within the limit"
    if d["reason"] == "within_baseline_runs":
        return head + (f": but inside the range of the {e['baseline_runs']} baseline runs "
                       f"(run-to-run spread {e['run_to_run_pct']:.2f} %)")
    if d["reason"] == "too_few_samples":
        return head + (f": cannot decide, {n['n_value']} sample(s) here and {n['n_baseline']} in the baseline "
                       f"(a test needs at least {MIN_SAMPLES} on each side)"
                       + ("; --strict fails it" if d["outcome"] == "fail" else "; not failed (use --strict to fail)"))
    t = d["test"]
    stat = _stat(t, _sampled(e["metric"], n["field"]))
    if d["reason"] == "clear":
        return head + f": statistically clear ({stat} < {t['alpha']:g})"
    return head + f", but not statistically clear ({stat} ≥ {t['alpha']:g})"


# The figures `mfu compare` gates and their per-occurrence samples (the one source: step_samples).
GATED: dict[str, Callable[[dict[str, Any]], list[float]]] = {
    "mfu_pct_wall": mfu_samples, "step_time_median_s": lambda r: step_samples(r)[1]}


def gate_word(gates: list[dict[str, Any]]) -> str:
    """The gate in one word for stdout and the pages: 'FAILED', 'undecided' (none failed but one had too few
    samples to test: not failed without --strict, yet nothing showed it within the limit), 'passed', or 'none'."""
    outcomes = {g["outcome"] for g in gates}
    return "none" if not gates else "FAILED" if "fail" in outcomes else "undecided" if "undecided" in outcomes \
        else "passed"


def judge(rows: list[dict], columns: list[dict], results: list[dict], baselines: Sequence[int], limit: float,
          strict: bool, allow: bool) -> list[dict[str, Any]]:
    """Per non-baseline column and gated figure of `mfu compare` (compare.json's rows and columns): pass, fail or
    undecided, with the reason."""
    out = []
    for row in (r for r in rows if r["metric"] in GATED):
        samples = GATED[row["metric"]]
        pooled = [v for b in baselines for v in samples(results[b])]
        base_values = [row["values"][b] for b in baselines]
        for i, col in enumerate(columns):
            if i in baselines:
                continue
            fig = next(f for f in col["figures"] if f["metric"] == row["metric"])
            d = row["deltas"][i]
            change = None if d is None else d["pct"]
            entry = {"column": col["label"], "job_file": col["job_file"], "metric": row["metric"],
                     "label": row["label"], "better": row["better"], "baseline": row["reference"],
                     "value": row["values"][i], "change_pct": change, "verdict": verdict(change, row["better"]),
                     "limit_pct": limit, "comparable": fig["comparable"], "reasons": fig["reasons"],
                     "samples": {"field": col["samples"]["field"], "n_value": len(samples(results[i])),
                                 "n_baseline": len(pooled)},
                     "baseline_runs": len(baselines), "run_to_run_pct": _spread(base_values, row["reference"]),
                     "test": None}
            out.append(_judge(entry, samples(results[i]), pooled, base_values, strict, allow))
    return out


def _spread(values: list[Any], ref: Any) -> float | None:
    """Largest deviation of a baseline run from the reference, in percent; None with one baseline."""
    if len(values) < 2 or ref in (None, 0) or any(v is None for v in values):
        return None
    return max(abs(v - ref) for v in values) / abs(ref) * 100.0


def _judge(e: dict[str, Any], x: list[float], y: list[float], base_values: list[Any], strict: bool,
           allow: bool) -> dict[str, Any]:
    if e["comparable"] is False and not allow:
        e.update(outcome="fail", detail="not comparable with the baseline: " + "; ".join(e["reasons"])
                 + " (--allow-incomparable gates it anyway)")
    elif e["change_pct"] is None:
        e.update(outcome="fail", detail="no value to compare" + (": " + "; ".join(e["reasons"]) if e["reasons"]
                                                                   else ""))
    else:
        d = decide(e["change_pct"], e["better"], e["limit_pct"], x, y, strict, value=e["value"],
                   base_values=base_values)
        e.update(outcome=d["outcome"], test=d["test"], detail=describe(e, d))
        if e["comparable"] is False:
            e["detail"] += "; gated although not comparable (--allow-incomparable): " + "; ".join(e["reasons"])
    e["passed"] = e["outcome"] != "fail"
    return e


def failure_kind(g: dict[str, Any], allow_incomparable: bool) -> str:
    """What a failed gated figure is: 'not comparable' (refused, nothing measured) or 'regression'.
    The one word for the log line and the JUnit failure's type."""
    return "not comparable" if g["comparable"] is False and not allow_incomparable else "regression"


def gate_lines(doc: dict[str, Any]) -> list[str]:
    """Failing and undecided figures, for stderr in CI logs (same names, signs and words as compare.md)."""
    return [f"{failure_kind(g, doc['allow_incomparable']) if g['outcome'] == 'fail' else 'undecided'}: "
            f"{g['column']} {g['label']}: "
            f"{_g(g['value'])} vs baseline {_g(g['baseline'])} — {g['detail']}"
            for g in doc["gates"] if g["outcome"] != "pass"]


def _g(v: float | None) -> str:
    return "—" if v is None else f"{v:.6g}"
