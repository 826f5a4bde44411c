-- reads: range_events, name_matches
-- creates: -
-- Every NVTX domain of the trace with its ranges and those whose name matches $name under $match
-- (region_ranges.sql's rule, without its domain filter), for the error when the job's
-- region.domain holds no match: domain names are case-sensitive, and the name may live in another
-- domain. A domain with no name is NULL: the default domain (domainId 0), or unnamed_id, the id of a
-- domain the export names nowhere (no eventType 75 row: a trimmed export), which region.domain cannot select.
SELECT domain,
       CASE WHEN domain IS NULL THEN coalesce(domain_id, 0) END AS unnamed_id,
       count(*) FILTER (WHERE name_matches(name, $name, $match)) AS matching, count(*) AS ranges
FROM range_events
GROUP BY ALL
ORDER BY matching DESC, ranges DESC, domain NULLS FIRST, unnamed_id;
