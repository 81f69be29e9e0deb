-- The floor of a find on the indexed column in the default order, second page of 10.
\set k random(0, :buckets - 1)
SELECT row_to_json(r)::text FROM (SELECT t."objectId", (extract(epoch from t.created) * 1000)::bigint AS created,
  (extract(epoch from t.updated) * 1000)::bigint AS updated, t."ownerId", t.k, t.name, 'Item'::text AS "___class"
  FROM SCHEMA."Item" t WHERE t.k = :k ORDER BY t.created, t."objectId" LIMIT 10 OFFSET 10) r;
