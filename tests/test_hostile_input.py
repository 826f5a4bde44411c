"""Hostile or absurd job files are exit 3 with a located message, before any trace is read.

The trace named by these jobs does not exist: had the job got as far as the trace, the exit
code would be 4, so exit 3 also shows the check came first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.job.parsing import MAX_DEPTH, MAX_NODES

JOB = """name: hostile
trace: missing.sqlite
region: {name: train_step}
hardware: {num_gpus: 2, precision: bf16}
model: {flops_per_step: 4.0e+13}
workload: {mode: training, seq_len: 2048, global_batch: 8}
"""


def run(tmp_path: Path, text: str, capsys, command: str = "validate") -> tuple[int, str]:
    job = tmp_path / "job.yaml"
    job.write_text(text)
    args = [command, str(job)] + (["--out", str(tmp_path / "out")] if command == "run" else [])
    code = main(args)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


@pytest.mark.parametrize("old, new, message", [
    ("flops_per_step: 4.0e+13", "flops_per_step: .nan", "/model/flops_per_step: .nan is not a finite number"),
    ("flops_per_step: 4.0e+13", "flops_per_step: -.inf", "/model/flops_per_step: -.inf is not a finite number"),
    ("flops_per_step: 4.0e+13", "flops_per_step: 1e400", "1e400 is not a finite number (too large for a float)"),
    ("seq_len: 2048", "seq_len: " + "7" * 300, "/workload/seq_len: 777777777777…(300 characters) is too large"),
])
def test_non_finite_and_absurd_numbers(tmp_path, capsys, old, new, message):
    code, err = run(tmp_path, JOB.replace(old, new), capsys, "run")
    assert code == 3 and message in err and "job.yaml:" in err


def test_a_non_finite_value_is_one_problem_not_two(tmp_path, capsys):
    """.inf under a bounded key was also 'inf is greater than the maximum of 100': one mistake, two messages."""
    code, err = run(tmp_path, JOB + "thresholds: {mfu_pct_wall_min: .inf}\n", capsys)
    lines = [line for line in err.splitlines() if "/thresholds/mfu_pct_wall_min" in line]
    assert code == 3 and len(lines) == 1 and ".inf is not a finite number" in lines[0]


def test_a_duplicate_key_does_not_hide_what_is_wrong_with_its_value(tmp_path, capsys):
    code, err = run(tmp_path, JOB + "thresholds: {mfu_pct_wall_min: 30, mfu_pct_wall_min: 300}\n", capsys)
    assert code == 3 and "duplicate key 'mfu_pct_wall_min'" in err and "300 is greater than the maximum of 100" in err


def test_alias_bomb_stops_at_the_expansion_limit(tmp_path, capsys):
    # nine levels of ten aliases each: 10**9 values once expanded, a few hundred bytes of text
    bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10))
    code, err = run(tmp_path, JOB + bomb, capsys)
    assert code == 3 and f"more than {MAX_NODES:,} values once aliases (*name) are expanded" in err


def test_a_few_aliases_are_fine(tmp_path, capsys):
    code, err = run(tmp_path, JOB.replace("name: hostile", "name: &n hostile") + "description: *n\n", capsys)
    assert (code, err) == (0, "")


def test_deep_nesting_stops_at_the_depth_limit(tmp_path, capsys):
    code, err = run(tmp_path, JOB + "description: " + "[" * 3000 + "]" * 3000 + "\n", capsys)
    assert code == 3 and f"nested deeper than {MAX_DEPTH} levels" in err and "job.yaml:7:" in err


def test_keys_that_are_not_text(tmp_path, capsys):
    code, err = run(tmp_path, JOB + "1: one\nyes: 2\n", capsys)
    assert code == 3
    assert "job.yaml:7:1: /1: key '1' is a number, not text" in err
    assert "job.yaml:8:1: /yes: key 'yes' is true/false, not text" in err


def test_oversized_file(tmp_path, capsys):
    code, err = run(tmp_path, JOB + "# " + "x" * (1 << 20) + "\n", capsys)
    assert code == 3 and "larger than any job or config file" in err


@pytest.mark.parametrize("name, message", [
    ('"hostile\\n"', "no spaces or line breaks"),
    ("index.md", "'index.md' is the name of one of the output folder's own files"),
    ("History", "'History' is the name of one of the output folder's own files"),
])
def test_job_names_are_full_matched_and_not_reserved(tmp_path, capsys, name, message):
    code, err = run(tmp_path, JOB.replace("name: hostile", f"name: {name}"), capsys)
    assert code == 3 and message in err and "/name" in err


def test_lookaround_in_region_regex_is_a_job_error(tmp_path, capsys):
    code, err = run(tmp_path, JOB.replace("{name: train_step}", '{name: "(?=train)step", match: regex}'),
                    capsys, "run")
    assert code == 3 and "/region/name: not a valid regular expression (RE2): invalid perl operator: (?=" in err


def test_lookbehind_in_kernel_classes_is_a_job_error(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    text = JOB.replace("missing.sqlite", str(trace)) + \
        'analysis:\n  kernel_classes:\n    - {class: communication, pattern: "nccl(?<!x)"}\n'
    code, err = run(tmp_path, text, capsys, "run")
    assert code == 3 and "/analysis/kernel_classes/0/pattern" in err and "(RE2)" in err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_broken_class_pattern_is_reported_before_a_broken_trace(synth_trace, tmp_path, capsys, workers):
    """A job-file mistake comes first (exit 3), whether the files are read inline or by spare workers
    (-j 2: a worker task per file). Inline used to open the files before reading the patterns, so the
    broken second file (exit 4) was reported instead, while spare workers said exit 3."""
    trace, _ = synth_trace()
    (tmp_path / "broken.sqlite").write_text("not a trace")
    job = tmp_path / "job.yaml"
    job.write_text(JOB.replace("trace: missing.sqlite", f"trace: [{trace}, broken.sqlite]").replace("num_gpus: 2", "num_gpus: 4")
                   + 'analysis:\n  kernel_classes:\n    - {class: communication, pattern: "nccl(?<!x)"}\n')
    code = main(["run", str(job), "--out", str(tmp_path / "out"), "-j", workers])
    err = capsys.readouterr().err
    assert code == 3 and "/analysis/kernel_classes/0/pattern" in err and "broken.sqlite" not in err


@pytest.mark.parametrize("content", ["first secret line\nsecond secret line\n", "- secret one\n- secret two\n",
                                     "\x00\x01 secret binary", "a: b: secret c\n"])
def test_extends_of_a_non_mapping_shows_none_of_its_lines(tmp_path, capsys, content):
    (tmp_path / "base.yaml").write_text(content)
    code, err = run(tmp_path, "extends: base.yaml\n" + JOB, capsys)
    assert code == 3 and "base.yaml" in err and "secret" not in err


@pytest.mark.parametrize("content", ["key: *secret_alias\n", "!secret_tag x\n", "a: {secret: 1, secret: 2}\n"])
def test_extends_of_a_file_not_named_yaml_is_not_read(tmp_path, capsys, content):
    """A base path pointing at a credentials file: YAML's own messages would quote an alias, a tag, a key of it."""
    (tmp_path / "creds.env").write_text(content)
    code, err = run(tmp_path, "extends: creds.env\n" + JOB, capsys)
    assert code == 3 and "job.yaml:1:10: /extends: extends: 'creds.env' is not named as a YAML job file" in err
    assert "secret" not in err


@pytest.mark.parametrize("old, new, message", [
    ("name: hostile", "name: no", "job.yaml:1:7: /name: false is not valid here: Report folder name under the output "
     "directory (reports/<name>/). Letters, digits, '.', '_' and '-'. (fix: YAML reads an unquoted "
     "yes/no/on/off/true/false as true or false: quote it if you mean the text (\"no\"), or write the value this key takes)"),
    ("name: hostile", "name: 2024-01-01", "job.yaml:1:7: /name: 2024-01-01 is not valid here: Report folder name "
     "under the output directory (reports/<name>/). Letters, digits, '.', '_' and '-'. "
     "(fix: YAML reads an unquoted 2024-01-01 as a date: quote it (\"2024-01-01\"))"),
    ("region: {name: train_step}", "region: {name: on}", "job.yaml:3:16: /region/name: true is not valid here"),
    ("num_gpus: 2", "num_gpus: -1", "job.yaml:4:22: /hardware/num_gpus: -1 is less than the minimum of 1 "
     "(fix: what goes here: GPUs that did the work of one occurrence"),
    ("name: hostile", "name: bad name", "job.yaml:1:7: /name: 'bad name' does not match '^[A-Za-z0-9][A-Za-z0-9._-]*$' "
     "(fix: what goes here: Report folder name under the output directory (reports/<name>/). Letters, digits"),
    # a percentage written with its sign is text to YAML: say to drop the '%', not only that it is not valid
    ("workload:", "thresholds: {mfu_pct_wall_min: 35%}\nworkload:", "job.yaml:6:32: /thresholds/mfu_pct_wall_min: "
     "'35%' is not valid here: Minimum wall-time MFU in percent. (fix: write the number alone, without '%' (35 for "
     "35 %))"),
    ("workload:", "thresholds: {hfu_pct_wall_min: -5 %}\nworkload:", "/thresholds/hfu_pct_wall_min: '-5 %' is not "
     "valid here: Minimum wall-time HFU in percent (at most 100: an HFU above it marks the result invalid). (fix: "
     "write the number alone, without '%' (-5 for -5 %))"),       # the value written, not a fixed example
])
def test_schema_problems_show_the_yaml_value_and_how_to_fix_it(tmp_path, capsys, old, new, message):
    """YAML 1.1 reads yes/no/on/off as booleans and 2024-01-01 as a date: say so in YAML's words (not
    Python's True or datetime.date(...)), and every schema problem says what the key takes."""
    code, err = run(tmp_path, JOB.replace(old, new), capsys)
    assert code == 3 and message in err, err
    assert "True" not in err and "datetime" not in err


def test_bytes_that_are_not_utf8_are_located(tmp_path, capsys):
    job = tmp_path / "job.yaml"
    job.write_bytes(JOB.replace("name: hostile", "name: hostile\ndescription: caf\xe9").encode("latin-1"))
    code = main(["validate", str(job)])
    err = capsys.readouterr().err
    assert code == 3
    assert f"{job}:2:17: /: not UTF-8 text (byte 30: 0xe9) (fix: save the file as UTF-8" in err


@pytest.mark.parametrize("written, message", [
    ("04000", "/workload/seq_len: 04000 is read by YAML 1.1 as 2048 (octal, because of the leading 0)"),
    ("1:00", "/workload/seq_len: 1:00 is read by YAML 1.1 as 60 (base 60)"),
])
def test_yaml11_octal_and_base60_integers_are_refused(tmp_path, capsys, written, message):
    """PyYAML turns seq_len: 04000 into 2048 and 1:00 into 60 without a word: a silently different job."""
    code, err = run(tmp_path, JOB.replace("seq_len: 2048", f"seq_len: {written}"), capsys)
    assert code == 3
    assert f"job.yaml:6:37: {message} (fix: write the number without a leading 0 or ':' (or quote it if it is text))" in err


def test_numbers_yaml_reads_as_written_still_pass(tmp_path, capsys):
    code, err = run(tmp_path, JOB.replace("seq_len: 2048", "seq_len: 2_048").replace("4.0e+13", "4.0e13"), capsys)
    assert (code, err) == (0, "")
    code, err = run(tmp_path, JOB.replace("seq_len: 2048", "seq_len: 07"), capsys)     # octal 7 is 7
    assert (code, err) == (0, "")


def test_peak_written_in_flops_is_refused(tmp_path, capsys):
    """989.4e12 in the TFLOP/s field would print an MFU 10^12 times too small; the catalog's cap (100,000
    TFLOP/s) holds for the job file too, and the limit itself passes."""
    code, err = run(tmp_path, JOB.replace("precision: bf16}", "precision: bf16, peak_tflops: 989.4e12}"), capsys)
    assert code == 3 and "job.yaml:4:55: /hardware/peak_tflops: 9.894e+14 is greater than the maximum of 100000" in err
    code, err = run(tmp_path, JOB.replace("precision: bf16}", "precision: bf16, peak_tflops: 100000}"), capsys)
    assert (code, err) == (0, "")


def test_a_nul_in_extends_is_located_not_a_crash(tmp_path, capsys):
    """open() raises ValueError, not OSError, for a NUL in a path: it was exit 5 with a traceback."""
    code, err = run(tmp_path, 'extends: "base\\0.yaml"\n' + JOB, capsys)
    assert code == 3 and "job.yaml:1:10: /extends: a path cannot hold a NUL character" in err


def test_a_nul_in_the_trace_path_is_located_not_a_crash(tmp_path, capsys):
    code, err = run(tmp_path, JOB.replace("trace: missing.sqlite", 'trace: "missing\\0.sqlite"'), capsys, "run")
    assert code == 3 and "job.yaml:2:8: /trace: a path cannot hold a NUL character" in err


@pytest.mark.parametrize("where", ["trace", "out", "inspect"])
def test_a_path_too_long_for_the_file_system_is_a_usage_error(tmp_path, capsys, where):
    """ENAMETOOLONG from a path a user gives (4,000 characters in one name; Linux takes 255) was exit 5 with a
    traceback; it is exit 2 saying so, the name shortened."""
    long = "a" * 4000
    job = tmp_path / "job.yaml"
    job.write_text(JOB.replace("missing.sqlite", long + ".sqlite") if where == "trace" else JOB)
    code = main({"trace": ["run", str(job), "--out", str(tmp_path / "out")],
                 "out": ["run", str(job), "--out", str(tmp_path / long)],
                 "inspect": ["inspect", str(tmp_path / long)]}[where])
    err = capsys.readouterr().err
    assert "Traceback" not in err and code == 2
    assert "characters): File name too long for this file system; use a shorter path" in err


@pytest.mark.parametrize("model, message", [
    # 10,001 layers: counted one by one, 10^12 of them ran for hours; the limit itself passes (below)
    ("{preset: llama-3.2-1b, layers: 10001}",
     "/model/layers: 1e+04 is more than any model has (at most 10,000 layers)"),
    ("{preset: llama-3.2-1b, mtp_layers: '1e5'}", "/model/mtp_layers: 1e+05 is more than any model has"),
    # each overflowed a float (int too large to convert): exit 5 with a traceback
    ("{preset: llama-3.2-1b, position_embeddings: 1e308}",
     "/model/position_embeddings: 1e+308 is more than any model has (at most 2,147,483,648)"),
    ("{flops_per_step: 1.7e308}", "/model/flops_per_step: 1.7e+308 is more than any model has (at most 1e+30 FLOPs)"),
    ("{flops_per_step: 4e13, hardware_flops_per_step: '2e30'}", "/model/hardware_flops_per_step: 2e+30 is more"),
])
def test_model_sizes_beyond_any_model_are_refused(tmp_path, capsys, model, message):
    code, err = run(tmp_path, JOB.replace("{flops_per_step: 4.0e+13}", model), capsys)
    assert code == 3 and "job.yaml:5:" in err and message in err


def test_the_model_size_limits_themselves_pass(tmp_path, capsys):
    model = "{preset: llama-3.2-1b, layers: 10000, vocab: 2147483648}"
    assert run(tmp_path, JOB.replace("{flops_per_step: 4.0e+13}", model), capsys) == (0, "")
    assert run(tmp_path, JOB.replace("4.0e+13", "1e30"), capsys) == (0, "")


@pytest.mark.parametrize("old, new, message", [
    # JSON Schema takes a whole float as an integer: 1e308 occurrences per step overflowed a float (exit 5)
    ("{name: train_step}", "{name: train_step, covers: 1e308}", "/region/covers: 1e+308 is too large (beyond 64-bit"),
    ("num_gpus: 2", "num_gpus: 1e19", "/hardware/num_gpus: 1e+19 is too large (beyond 64-bit integers)"),
])
def test_a_whole_float_beyond_64_bits_is_no_count(tmp_path, capsys, old, new, message):
    code, err = run(tmp_path, JOB.replace(old, new), capsys)
    assert code == 3 and message in err
    assert run(tmp_path, JOB.replace("num_gpus: 2", "num_gpus: 2e3"), capsys) == (0, "")   # a whole float counts
    code, err = run(tmp_path, JOB.replace("num_gpus: 2", "num_gpus: 2, gpu: 1e308"), capsys)    # a name: no count
    assert code == 3 and "/hardware/gpu: 1e+308 is not valid here" in err and "64-bit" not in err


@pytest.mark.parametrize("key", ["peak_tflops", "achievable_tflops", "hbm_gbps"])
def test_a_peak_or_bandwidth_too_small_to_divide_by_is_refused(tmp_path, capsys, key):
    """5e-324 passed `exclusiveMinimum: 0`, then the MFU's denominator rounded to 0 (ZeroDivisionError), the MFU
    against the ceiling was inf (result.json could not be written) or the roofline's ridge was inf."""
    code, err = run(tmp_path, JOB.replace("precision: bf16}", f"precision: bf16, {key}: 5e-324}}"), capsys)
    assert code == 3 and f"/hardware/{key}: 5e-324 is less than the minimum of 0.001" in err
    assert run(tmp_path, JOB.replace("precision: bf16}", f"precision: bf16, {key}: 0.001}}"), capsys) == (0, "")


def test_a_catalog_peak_too_small_to_divide_by_is_refused(tmp_path):
    from pipeline.errors import ConfigError
    from pipeline.hardware.catalog import DEFAULT_CATALOG, load_catalog
    text = DEFAULT_CATALOG.read_text(encoding="utf-8")
    broken = tmp_path / "hardware.yaml"
    broken.write_text(text.replace("  bf16: 989.4\n", "  bf16: 5e-324\n", 1), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bf16: 5e-324 is less than the minimum of 0.001"):
        load_catalog(broken)


@pytest.mark.parametrize("text, where, message", [
    # an alias inside its own anchor's value: the positions walk recursed without end (exit 5, RecursionError)
    ("x: &r {y: *r}\n", "job.yaml:7:11:", "the alias *r is inside the value &r names, a value that contains itself"),
    ("x: &a [*a]\n", "job.yaml:7:8:", "the alias *a is inside the value &a names"),
    # an explicit tag on a value it cannot read: PyYAML's int() raised ValueError (exit 5)
    ("x: !!int two\n", "job.yaml:7:4:", "a value its tag cannot read (invalid literal for int() with base 10: 'two')"),
    ("x: [1, !!float abc]\n", "job.yaml:7:8:", "a value its tag cannot read"),
])
def test_yaml_no_value_can_be_is_located(tmp_path, capsys, text, where, message):
    code, err = run(tmp_path, JOB + text, capsys)
    assert code == 3 and f"{where} /: invalid YAML: {message}" in err


def test_a_shipped_file_whose_alias_contains_itself_is_a_config_error():
    from pipeline.errors import ConfigError
    from pipeline.job.documents import parse_yaml
    with pytest.raises(ConfigError, match="an alias .* inside the value its anchor"):
        parse_yaml("a: &a [*a]\n", "models.yaml", shipped=True)


def test_the_64_bit_integers_end_where_int64_does(tmp_path, capsys):
    """-2^63 is a 64-bit integer (the smallest): it was called 'too large'; 2^63 is not one."""
    covers = "{name: train_step, covers: %s}"
    code, err = run(tmp_path, JOB.replace("{name: train_step}", covers % "-9223372036854775808"), capsys)
    assert code == 3 and "/region/covers: -9223372036854775808 is not valid here" in err and "64-bit" not in err
    code, err = run(tmp_path, JOB.replace("{name: train_step}", covers % "9223372036854775808"), capsys)
    assert code == 3 and "/region/covers: 9223372036854775808 is too large (beyond 64-bit integers)" in err
