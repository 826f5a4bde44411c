-- reads: ranges
-- creates: -
-- Range names close to a region name that matched nothing (the "did you mean" of a job's region):
--   kind 'prefix': names that `match: prefix` would find (PyTorch appends ", seq = N, op_id = M"),
--                  one row per name group with one full example name;
--   kind 'near':   name groups within a small edit distance of $name (typos, case), nearest first.
-- Grouping by name first keeps the edit-distance work to the distinct names, not the ranges.
WITH names AS (
    SELECT name, count(*) AS ranges FROM ranges GROUP BY name
),
groups AS (
    SELECT regexp_replace(name, ', (seq|op_id) = [0-9]+.*$', '') AS name_group,
           min(name) AS example, sum(ranges) AS ranges,
           bool_or(starts_with(name, $name)) AS prefix_hit
    FROM names
    GROUP BY 1
),
prefix AS (
    SELECT 'prefix' AS kind, name_group, example, ranges, 0 AS distance
    FROM groups WHERE prefix_hit
    ORDER BY ranges DESC, name_group LIMIT 5
),
near AS (
    SELECT 'near' AS kind, name_group, example, ranges,
           levenshtein(lower(name_group), lower($name)) AS distance
    FROM groups
    WHERE NOT prefix_hit
      AND levenshtein(lower(name_group), lower($name)) <= greatest(2, length($name) // 4)
    ORDER BY distance, ranges DESC, name_group LIMIT 5
)
SELECT * FROM prefix
UNION ALL
SELECT * FROM near
ORDER BY kind DESC, distance, ranges DESC, name_group;
