-- reads: raw_nvtx, nvtx_domains
-- creates: nccl_ranges
-- The NVTX ranges NCCL records itself (domain 'NCCL': one range per call, ncclAllReduce, ncclBroadcast, ...)
-- with the communicator each names. NCCL's NVTX payload is exported as the range's jsonText, e.g.
-- {"NCCL communicator ID":13429301450432826988,"Message size [bytes]":4,"Reduction operation":"Sum"};
-- comm_key is that ID (NCCL's commHash: the same on every rank of one communicator, so it names one
-- communicator across processes and files), exactly as an unsigned 64-bit integer. NULL where the range
-- names none: calls that carry no communicator (ncclGroupStart, ncclGroupEnd), an NCCL without payloads,
-- an export without a jsonText column or with a text that is no JSON. attribute_launch.sql gives a kernel
-- the communicator of the NCCL range its launch call lies in on the same thread (docs/figures.md §4).
CREATE OR REPLACE TEMP TABLE nccl_ranges AS
SELECT n.globalTid AS global_tid, n.start AS start_ns, n."end" AS end_ns,
       CASE WHEN json_valid(n.jsonText)
            THEN TRY_CAST(json_extract_string(n.jsonText, '$."NCCL communicator ID"') AS UBIGINT) END AS comm_key
FROM raw_nvtx AS n
JOIN nvtx_domains AS d
  ON d.domain_id = n.domainId AND d.global_pid = n.globalTid & ~CAST(16777215 AS BIGINT)
WHERE n.eventType IN (59, 60) AND n."end" IS NOT NULL AND d.domain = 'NCCL';

SELECT count(*) AS ranges, count(comm_key) AS with_communicator FROM nccl_ranges;
