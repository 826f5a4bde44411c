"""A job that fails without a result keeps what was read of it (name, config hash) for a history's failed row
(history format 4). Expected values by hand."""

from __future__ import annotations

import hashlib

import pytest

from pipeline.errors import ConfigError
from pipeline.job.config import load_job


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("text, name", [
    ("name: c\ntrace: t.sqlite\n", "c"),                # problems elsewhere (region, model...): the name stands
    ("name: ../c\ntrace: t.sqlite\n", None),            # a problem with the name itself: not taken
    ("name: c\ntrace: [unclosed\n", None),              # not YAML: nothing was parsed
    ("- name: c\n", None),                              # not a mapping
])
def test_a_job_file_that_does_not_load_says_its_name_and_hash(tmp_path, text, name):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_job(path)
    assert (info.value.job_name, info.value.config_sha256) == (name, sha(text.encode()))


def test_the_hash_of_a_job_file_that_extends_a_base_covers_the_base(tmp_path):
    """As a loaded job's config hash does (load_job: the job's bytes, a NUL, the base's bytes)."""
    base, job = b"kind: base\nhardware: {num_gpus: 8, precision: bf16}\n", b"extends: base.yaml\nname: c\n"
    (tmp_path / "base.yaml").write_bytes(base)
    (tmp_path / "c.yaml").write_bytes(job)
    with pytest.raises(ConfigError) as info:
        load_job(tmp_path / "c.yaml")
    assert (info.value.job_name, info.value.config_sha256) == ("c", sha(job + b"\0" + base))


def test_a_job_file_that_cannot_be_read_has_neither(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_job(tmp_path / "none.yaml")
    assert (info.value.job_name, info.value.config_sha256) == (None, None)
