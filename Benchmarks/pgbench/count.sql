-- The floor of a count on the indexed column.
\set k random(0, :buckets - 1)
SELECT count(*) FROM SCHEMA."Item" t WHERE t.k = :k;
