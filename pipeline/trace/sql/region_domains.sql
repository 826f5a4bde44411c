-- reads: range_events, name_matches
-- creates: -
-- Every NVTX domain of the trace with its ranges and those whose name matches $name under $match
-- (region_ranges.sql's rule, without its domain filter), for the error when the job's
-- region.domain holds no match: domain names are case-sensitive, and the name may live in another
-- domain. The default domain (no domain registered) is NULL.
SELECT domain, count(*) FILTER (WHERE name_matches(name, $name, $match)) AS matching, count(*) AS ranges
FROM range_events
GROUP BY domain
ORDER BY matching DESC, ranges DESC, domain NULLS FIRST;
