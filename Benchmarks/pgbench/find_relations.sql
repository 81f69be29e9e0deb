-- The floor of a find with relations at depth 1: the second page of 10 items on the indexed
-- column (their ids kept), then every item's first 10 parts in link order in one statement —
-- the two round trips the product makes.
\set k random(0, :buckets - 1)
SELECT json_agg(r)::text AS page, array_agg(r."objectId") AS ids FROM (SELECT t."objectId",
  (extract(epoch from t.created) * 1000)::bigint AS created, (extract(epoch from t.updated) * 1000)::bigint AS updated,
  t."ownerId", t.k, t.name, 'Item'::text AS "___class"
  FROM SCHEMA."Item" t WHERE t.k = :k ORDER BY t.created, t."objectId" LIMIT 10 OFFSET 10) r \gset
SELECT p.parent, row_to_json(r)::text FROM unnest(:ids::text[]) AS p(parent) CROSS JOIN LATERAL (
  SELECT t."objectId", (extract(epoch from t.created) * 1000)::bigint AS created,
    (extract(epoch from t.updated) * 1000)::bigint AS updated, t."ownerId", t.name, 'Part'::text AS "___class"
  FROM SCHEMA."Part" t JOIN SCHEMA."PARTS_LINK" l ON l.child = t."objectId" AND l.parent = p.parent
  ORDER BY l.position LIMIT 10) r LIMIT 10001;
