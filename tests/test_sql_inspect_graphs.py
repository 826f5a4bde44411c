"""inspect_graphs.sql: how a capture recorded CUDA graphs (whole-launch rows or kernel rows of graphs)."""

from __future__ import annotations

import pytest

from pipeline.trace import chain
from pipeline.trace.inspect import graph_mode


@pytest.mark.parametrize("mode", [None, "node", "graph"])
def test_counts_of_each_capture_mode(synth_trace, open_views, mode):
    path, truth = synth_trace(ranks=2, steps=3, kernels_per_step=8, cuda_graph=mode)
    (row,) = chain.run(open_views(path).con, {"inspect_read", "inspect_graphs"})["inspect_graphs"]
    launches = 2 * 3                            # one graph launch per step and rank
    assert row == {"graph_launch_rows": launches if mode == "graph" else 0,
                   "graphs_as_rows": 2 if mode == "graph" else 0,          # graph 1 of each process
                   "graph_node_kernels": launches * 8 if mode == "node" else 0,
                   "graphs_as_nodes": 2 if mode == "node" else 0}
    assert graph_mode(row) == (mode or "none")
