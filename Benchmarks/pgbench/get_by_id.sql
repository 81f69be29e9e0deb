-- The physical floor of GET by id: the same projection by primary key, as JSON text.
\set n random(1, :rows)
SELECT row_to_json(r)::text FROM (SELECT t."objectId", (extract(epoch from t.created) * 1000)::bigint AS created,
  (extract(epoch from t.updated) * 1000)::bigint AS updated, t."ownerId", t.k, t.name, 'Item'::text AS "___class"
  FROM SCHEMA."Item" t WHERE t."objectId" = '00000000-0000-4000-8000-' || lpad(:n::text, 12, '0')) r;
