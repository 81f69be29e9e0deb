-- The floor of a partial update, as the product writes it: one statement updating by primary
-- key, answering the object as JSON text in the wire projection and sending the change event.
\set n random(1, :rows)
\set v random(1, 1000000)
WITH w AS (UPDATE SCHEMA."Item" AS t SET updated = date_trunc('milliseconds', now()), name = 'updated ' || :v
  WHERE t."objectId" = '00000000-0000-4000-8000-' || lpad(:n::text, 12, '0') RETURNING t.*)
SELECT row_to_json(r)::text, pg_notify('baas_data_changes', json_build_object('app', 'bench', 'table', 'Item',
  'operation', 'update', 'ids', json_build_array(r."objectId"))::text)
FROM (SELECT t."objectId", (extract(epoch from t.created) * 1000)::bigint AS created,
  (extract(epoch from t.updated) * 1000)::bigint AS updated, t."ownerId", t.k, t.name, 'Item'::text AS "___class"
  FROM w t) r;
