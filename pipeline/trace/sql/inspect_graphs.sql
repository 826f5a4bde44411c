-- reads: kernel_rows, raw_graph_trace
-- creates: -
-- How the trace recorded CUDA graphs (docs/figures.md §4): whole launches as one row each in
-- CUPTI_ACTIVITY_KIND_GRAPH_TRACE (--cuda-graph-trace=graph: their kernels are not in the
-- kernel table), and kernel rows that belong to a graph (graphId set: --cuda-graph-trace=node).
-- graphIds are per process: a graph is (globalPid, graphId). Kernel rows: inspect_read.sql's one read.
SELECT
    (SELECT count(*) FROM raw_graph_trace) AS graph_launch_rows,
    (SELECT count(*) FROM (SELECT DISTINCT globalPid, graphId FROM raw_graph_trace)) AS graphs_as_rows,
    (SELECT count(*) FROM kernel_rows WHERE node_graph_id IS NOT NULL) AS graph_node_kernels,
    (SELECT count(*) FROM (SELECT DISTINCT global_pid, node_graph_id FROM kernel_rows WHERE node_graph_id IS NOT NULL))
        AS graphs_as_nodes;
