"""Report layout: verdict first, one unit per column, 4 significant digits, tables with headers.

Rendered from the committed demo result with single fields changed by hand (an invalid status,
a failed threshold, warnings), so each case differs from the demo in exactly what it tests.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from pipeline.report.fmt import column, fmt_num, fmt_pct, fmt_seconds, fmt_si, fmt_util
from pipeline.report.render import processes, render_all, verdict

DEMO = json.loads((Path(__file__).resolve().parents[1] / "reports/demo/result.json").read_text())
NB = "\u00a0"


def demo(**changes) -> dict:
    r = copy.deepcopy(DEMO)
    r.update(changes)
    return r


@pytest.mark.parametrize("value, text", [
    (0.9921390, f"992.1{NB}ms"), (1.10212, f"1.102{NB}s"), (1.2e-5, f"12.00{NB}µs"), (None, "—"),
    (float("nan"), "—"), (0.0, f"0{NB}ns")])
def test_seconds_have_four_significant_digits_and_a_fixed_space(value, text):
    assert fmt_seconds(value) == text


def test_numbers_and_magnitudes():
    assert fmt_si(3_373_164_235_063_296) == f"3.373{NB}PFLOP"
    assert fmt_si(8_030_261_248, "") == f"8.030{NB}G"
    assert fmt_num(382.61) == "382.6" and fmt_num(59459.4, 0) == "59,459" and fmt_num(None) == "—"
    assert fmt_pct(38.664) == f"38.66{NB}%"
    # a positive share too small for the decimals is not printed as zero; zero stays zero
    assert fmt_pct(0.0015) == f"<0.01{NB}%" and fmt_pct(0.0015, 1) == f"<0.1{NB}%"
    assert fmt_pct(0.005) == f"0.01{NB}%" and fmt_pct(0.0) == f"0.00{NB}%"
    assert fmt_util(0.0015) == "<0.01" and fmt_util(0.0) == "0.00" and fmt_util(1234.5) == f"1,234.50{NB}⚠"


def test_a_column_keeps_one_unit():
    # typical value 2.1 ms: the column is in ms, every cell 4 significant digits in that unit
    c = column([0.0021, 0.0005, 0.0031, None], "s")
    assert c.head("wall") == "wall (ms)"
    assert [c(v) for v in (0.0021, 0.0005, 0.0312, None)] == ["2.100", "0.5000", "31.20", "—"]
    f = column([70_368_744_177_664, 738_871_813_865_472], "FLOP")      # median 738.9 T
    assert f.head("FLOPs") == "FLOPs (TFLOP)" and f(2_216_615_441_596_416) == "2,217"


def test_units_switch_at_their_own_magnitude():
    """A value equal to a unit's size is shown in that unit; zeros and missing cells choose no column unit."""
    assert fmt_si(10**15) == f"1.000{NB}PFLOP" and fmt_si(2500, "B") == f"2.500{NB}kB" and fmt_si(999) == f"999.0{NB}FLOP"
    assert fmt_seconds(1.0) == f"1.000{NB}s" and fmt_seconds(1e-3) == f"1.000{NB}ms"
    assert column([0.0, 0.0, 0.0, 0.002], "s").head("wall") == "wall (ms)"     # typical of the non-zero values
    assert column([None, 0.0], "s").head("wall") == "wall (s)"                   # nothing to go by: seconds


def test_a_utilization_cell_is_marked_only_above_100():
    assert fmt_util(100.0) == "100.00" and fmt_util(100.004) == f"100.00{NB}⚠" and fmt_util(None) == "—"


def test_process_lists_collapse():
    assert processes([4000, 4001, 4002], 3) == f"all{NB}3"
    assert processes([4000, 4001], 8) == "4000, 4001"
    assert processes(list(range(6)), 8) == "0, 1, 2, … (6)"


def test_verdict_order():
    assert verdict(demo())["text"] == "ok"
    warned = demo(warnings=[{"code": "x", "message": "m"}, {"code": "y", "message": "n"}])
    assert verdict(warned)["text"] == "warnings: 2"
    failed = demo(thresholds=[{"name": "mfu_pct_wall_min", "limit": 50, "value": 38.7, "passed": False}])
    assert verdict(failed) == {"css": "fail", "text": "threshold failed", "why": "mfu_pct_wall_min"}
    invalid = demo(status="invalid", status_reason="MFU above 100 %", thresholds=failed["thresholds"])
    assert verdict(invalid)["text"] == "invalid"


def _html(r: dict) -> str:
    return render_all(r)["report.html"]


def test_headline_comes_first_with_the_badge():
    html = _html(demo(thresholds=[{"name": "mfu_pct_wall_min", "limit": 50, "value": 38.66, "passed": False}],
                      warnings=[{"code": "step_variance", "message": "steps vary"}]))
    head = html.split('<h2 id="how">')[0]
    assert '<span class="badge fail" title="mfu_pct_wall_min">threshold failed</span>' in head
    assert 'Threshold failed: <a href="#thresholds">mfu_pct_wall_min</a> (38.66 against limit 50)' in head
    assert '<a href="#w1">step_variance</a>' in head and '<li id="w1">' in html
    assert "llama-3-8b · 8&nbsp;×&nbsp;NVIDIA H100 SXM5 80GB · bf16 · 5 occurrences (2–6)" in head
    md = render_all(demo(warnings=[{"code": "step_variance", "message": "steps vary"}]))["report.md"]
    assert md.index("verdict: **warnings: 1**") < md.index("## Headline")


def test_invalid_mfu_card_is_greyed_with_the_reason():
    html = _html(demo(status="invalid", status_reason="MFU 140 % is above 100 %."))
    card = re.search(r'<div class="card main void">.*?</div></div>', html, re.S).group(0)
    assert "not a measurement: MFU 140 % is above 100 %." in card and 'badge invalid' in card
    assert '<div class="card main">' not in html


def test_an_invalid_results_figures_from_its_flops_or_tokens_are_struck_out_as_in_the_index():
    """The HTML voided the MFU, HFU, union and TFLOP/s cards but showed tokens/s (the line below) and the MFU
    against the measured ceiling plainly, and report.md struck nothing: the index strikes an invalid result's
    MFU, HFU and tokens/s. Times (step time, union over wall) are measured and stay as they are."""
    r = demo(status="invalid", status_reason="MFU 140 % is above 100 %.")
    r["metrics"]["mfu_pct_achievable"], r["hardware"]["achievable_tflops"] = 50.0, 700.0
    r["metrics"]["active_ratio_pct_union"] = None                        # no figure: a dash, not struck
    pages = render_all(r)
    md = pages["report.md"].replace(NB, " ")
    assert "**MFU ~~38.66 %~~** · verdict: **invalid**" in md
    for row in ("| **MFU (wall time)** — the official figure — INVALID, not a measurement | **~~38.66 %~~** |",
                "| MFU against the measured ceiling (700.0 TFLOP/s) | ~~50.00 %~~ |",
                "| HFU (wall time, counts recomputation) | ~~38.66 %~~ |",
                "| Active-time ratio (kernel union) — diagnostic, not MFU | — |",
                "| Kernel union / wall time | 91.5 % |",
                "| Step time, median of 5 (min / max, CV) | 1.102 s (1.102 s / 1.103 s, &lt;0.1 %) |",
                "| Achieved model TFLOP/s per GPU | ~~382.6~~ |", "| Tokens per second | ~~59,459~~ |"):
        assert row + "\n" in md, row
    html = pages["report.html"].replace(NB, " ")
    assert 'Tokens/s <s title="not a measurement">59,459</s>. Kernel union covers 91.5 % of wall time.' in html
    assert '<div class="card void"><div class="l">MFU vs measured ceiling (700.0&nbsp;TFLOP/s)</div>' in html
    assert '<div class="card"><div class="l">Step time, median of 5</div>' in html
    ok = render_all(demo())
    head = ok["report.md"].split("The active-time ratio divides", 1)[0]
    assert "~~" not in head and "| Tokens per second | 59,459 |" in head.replace(NB, " ")
    assert "<s " not in ok["report.html"].split("<h2", 1)[0] and " void" not in ok["report.html"].split("<h2", 1)[0]


def test_an_invalid_results_mfu_and_hfu_are_struck_in_every_table_not_only_the_headline():
    """Under a struck headline MFU, the Occurrences table (each occurrence and the total) and the Ranks
    section (spread and each rank) showed the same MFU and HFU plain, on both pages."""
    r = demo(status="invalid", status_reason="MFU 140 % is above 100 %.")
    figures = ([o["mfu_pct_wall"] for o in r["occurrences"]] + [o["hfu_pct_wall"] for o in r["occurrences"]]
               + [r["metrics"]["mfu_pct_wall"], r["metrics"]["hfu_pct_wall"]]
               + [r["rank_spread"]["mfu_pct_wall"][k] for k in ("min", "median", "max")]
               + [k["mfu_pct_wall"] for k in r["rank_summary"]])
    assert len(figures) == 2 * 5 + 2 + 3 + 8
    pages = render_all(r)
    md = pages["report.md"].split("## Occurrences", 1)[1].split("## Thresholds", 1)[0].split("## Warnings", 1)[0]
    html = pages["report.html"].split('id="occurrences"', 1)[1].split('id="warnings"', 1)[0]
    for value in figures:
        assert f"~~{value:.2f}~~" in md and f'<s title="not a measurement">{value:.2f}</s>' in html, value
    assert md.count("~~") == 2 * len(figures) and html.count("<s title=") == len(figures)
    ok = render_all(demo())
    assert "~~" not in ok["report.md"] and "<s " not in ok["report.html"]


def test_every_table_has_a_header_and_a_scroll_box():
    html = _html(demo())
    tables = re.findall(r"(.{25})<table>(.*?)</table>", html, re.S)
    assert len(tables) >= 10
    for before, body in tables:
        assert before.endswith('<div class="scroll">') and body.lstrip().startswith("<thead>")
    assert 'id="where"' in html and '<a href="#where">' in html         # table of contents with anchors


def test_kernel_names_stay_whole_in_the_title():
    html = _html(demo())
    name = DEMO["top_kernels"][0]["name"]
    assert f'<td class="kname"><code title="{name}">{name}</code></td>' in html


def test_the_flops_section_states_the_convention_it_used():
    """docs/figures.md §7: the report says which convention (halving, LM head, experts), not only its name."""
    note = "component-wise; causal attention: QKᵀ and ×V counted at half; LM head included"
    r = demo()
    r["flops"] = {**r["flops"], "convention": "megatron", "convention_note": note}
    pages = render_all(r)
    assert f"Convention: `megatron`: {note}." in pages["report.md"]
    assert f"Convention <code>megatron</code>: {note}." in pages["report.html"]


def test_the_flops_table_shows_hfus_multipliers_and_totals_beside_mfus():
    """The table showed only MFU's multiplier and model FLOPs; HFU's recomputation was in a note, so HFU could
    not be derived from the page. Full recomputation by hand: the MLP's forward (738.9 TFLOP per step) counted
    4x instead of 3x, the LM head (not checkpointed) 3x; the hardware total gains one MLP forward."""
    r = demo()
    mlp_forward = 738_871_813_865_472
    for c in r["flops"]["breakdown"]:
        if c["component"] == "mlp":
            assert c["forward_flops"] == mlp_forward
            c["hardware_multiplier"], c["hardware_total"] = 4, 2_955_487_255_461_888        # 4 x 738,871,813,865,472
    per_step = 4_112_036_048_928_768                                 # 3,373,164,235,063,296 + 738,871,813,865,472
    r["flops"]["hardware_flops_per_step"] = per_step
    r["totals"]["hardware_flops"] = 5 * per_step                     # 1 step per occurrence, 5 occurrences
    r["metrics"]["hfu_pct_wall"] = 100 * 5 * per_step / (5.510978888 * 8 * 989.4e12)   # = 47.134 %
    pages = render_all(r)
    md = pages["report.md"].replace(NB, " ")
    assert ("| component | forward FLOPs (TFLOP) | MFU × | model FLOPs per step (TFLOP) | HFU × | hardware FLOPs per "
            "step (TFLOP) |") in md
    assert "| mlp | 738.9 | 3 | 2,217 | 4 | 2,955 |" in md
    assert "| lm_head | 68.86 | 3 | 206.6 | 3 | 206.6 |" in md
    assert "| **total** | — | — | **3,373** | — | **4,112** |" in md
    hfu = ("HFU = hardware FLOPs / (wall time × GPUs × dense peak per GPU)\n"
           "    = 20.56 PFLOP / (5.511 s × 8 × 989.4 TFLOP/s)\n    = 47.13 %")
    assert hfu in md and hfu.replace(" TFLOP/s", "&nbsp;TFLOP/s") in pages["report.html"].replace(NB, " ")
    assert "| hardware FLOPs per optimizer step | 4.112 PFLOP | model FLOPs plus what is recomputed" in md
    html = pages["report.html"].replace(NB, " ")
    assert ('<th class="n">MFU ×</th><th class="n">model FLOPs per step (TFLOP)</th><th class="n">HFU ×</th>'
            '<th class="n">hardware FLOPs per step (TFLOP)</th>') in html
    assert ('<tr><td>mlp</td><td class="n">738.9</td><td class="n">3</td><td class="n">2,217</td><td class="n">4</td>'
            '<td class="n">2,955</td></tr>') in html
    assert ('<tr><th>total</th><td class="n">—</td><td class="n">—</td><th class="n">3,373</th><td class="n">—</td>'
            '<th class="n">4,112</th></tr>') in html


def test_an_explicit_numerator_shows_no_hfu_multiplier():
    """`model.flops_per_step` and `hardware_flops_per_step` given in the job file: the hardware figure is no
    multiple of a forward pass, so its multiplier is not printed as 1."""
    r = demo()
    r["flops"] = {**r["flops"], "convention": "explicit", "model_flops_per_step": 4 * 10**15,
                  "hardware_flops_per_step": 5 * 10**15,
                  "breakdown": [{"component": "explicit", "forward_flops": 4 * 10**15, "multiplier": 1,
                                 "total": 4 * 10**15, "hardware_multiplier": 1, "hardware_total": 5 * 10**15}]}
    md = render_all(r)["report.md"]
    assert "| explicit | 4.000 | 1 | 4.000 | — | 5.000 |" in md and "| **total** | — | — | **4.000** | — | **5.000** |" in md


@pytest.mark.parametrize("hbm_source, shown", [
    (None, ["both: SRC"]),                                       # one catalog entry gave both: cited once
    ("from job file", ["TFLOP/s (SRC) ÷", "GB/s (from job file)"]),
])
def test_roofline_ridge_cites_each_source_once(hbm_source, shown):
    """The ridge line printed the catalog entry's whole source (two references and a URL) twice, once
    after the peak and once after the bandwidth, when both came from the same entry."""
    r = copy.deepcopy(DEMO)
    r["hardware"]["peak_source"] = "SRC"
    r["hardware"]["hbm_source"] = hbm_source or "SRC"
    for page in ("report.md", "report.html"):
        [ridge] = [ln for ln in render_all(r)[page].splitlines() if "FLOP/byte =" in ln]
        text = ridge.replace(NB, " ")
        assert text.count("SRC") == 1
        assert all(s in text for s in shown), text


def test_flops_cross_check_says_which_figure_is_what_share_of_which():
    """report.md said "(106.8 % of it is the chosen figure)", which reads as the chosen figure being 6·N's share
    of something; report.html left the comparison out. Both say it the same way now; 3.373 / 3.158 by hand."""
    f = DEMO["flops"]
    ratio = 100 * f["model_flops_per_step"] / f["six_n_flops_per_step"]
    assert round(ratio, 1) == 106.8
    files = render_all(DEMO)
    for page in ("report.md", "report.html"):
        assert f"per step; the chosen figure is 106.8{NB}% of it." in files[page]
        assert "of it is the chosen figure" not in files[page]


def test_html_kernel_names_that_share_their_start_are_shown_whole():
    """cuBLAS names alike for 100 characters (a real H100 trace: ..._execute_kernel__5x_cublas and
    ..._execute_split_k_kernel__5x_cublas) were both cut by CSS at 32 characters to the same
    'sm80_xmma_gemm_f32f32_f32f32_f…': two rows that read as one kernel listed twice. A name alone at its
    cut is still cut by CSS (class "whole" is what lifts the cut)."""
    stem = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_"
    alike = [stem + "kernel__5x_cublas", stem + "split_k_kernel__5x_cublas"]
    r = copy.deepcopy(DEMO)
    r["top_kernels"][0]["name"], r["top_kernels"][1]["name"] = alike
    html = render_all(r)["report.html"]
    for name in alike:
        assert f'<code title="{name}" class="whole">{name}</code>' in html
    lone = DEMO["top_kernels"][3]["name"]                    # flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel
    assert len(lone) > 32
    assert f'<td class="kname"><code title="{lone}">{lone}</code></td>' in html


def test_html_kernel_list_keeps_each_comma_with_its_name():
    """The precision table's "largest kernels" wrapped before each comma at 768 px, leaving ',' alone at the
    start of a line under each name: a name and its comma are one unbreakable piece now."""
    html = render_all(DEMO)["report.html"]
    names = DEMO["gemm_precision"]["precisions"][0]["kernels"]
    assert len(names) == 3
    pieces = [f'<span class="nw"><code title="{n}">{n}</code>{"," if i < 2 else ""}</span>' for i, n in enumerate(names)]
    assert " ".join(pieces) in html


def test_one_occurrence_and_one_straggler_occurrence_are_singular():
    """'1 occurrences' in the headline and '2 of 1 occurrences' style counts read as a slip in a report."""
    r = demo()
    r["totals"] = dict(r["totals"], occurrences=1)
    r["region"] = dict(r["region"], first=3, last=3)
    r["straggler"] = dict(r["straggler"], occurrences=r["straggler"]["occurrences"][:1], slowest_count=1)
    files = render_all(r)
    assert "bf16 · 1 occurrence (3–3) of" in files["report.md"]
    assert "bf16 · 1 occurrence (3–3) of" in files["report.html"]
    for page in ("report.md", "report.html"):
        assert "(alone last to finish in 1 of 1 occurrence)" in files[page]
    assert "5 occurrences (2–6)" in render_all(demo())["report.md"]


def test_a_roofline_row_above_its_roof_is_marked():
    """No kernel runs above its roof: a % of roof over 100 means the row's FLOPs or bytes do not describe
    those kernels, and is marked as the occurrence MFU cells are (it printed as a plain 150.0)."""
    r = demo()
    r["roofline"] = [dict(r["roofline"][0], pct_of_roof=150.0), dict(r["roofline"][1], pct_of_roof=42.25)]
    files = render_all(r)
    for page in ("report.md", "report.html"):
        assert f"150.0{NB}⚠" in files[page] and f"42.2{NB}⚠" not in files[page]
