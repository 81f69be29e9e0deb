-- The floor of a create, as the product writes it: one statement inserting the object,
-- answering it as JSON text in the wire projection and sending the change event.
\set k random(0, :buckets - 1)
WITH w AS (INSERT INTO SCHEMA."Item" AS t ("objectId", "ownerId", k, name)
  VALUES (upper(gen_random_uuid()::text), NULL, :k, 'created') RETURNING t.*)
SELECT row_to_json(r)::text, pg_notify('baas_data_changes', json_build_object('app', 'bench', 'table', 'Item',
  'operation', 'create', 'ids', json_build_array(r."objectId"))::text)
FROM (SELECT t."objectId", (extract(epoch from t.created) * 1000)::bigint AS created,
  (extract(epoch from t.updated) * 1000)::bigint AS updated, t."ownerId", t.k, t.name, 'Item'::text AS "___class"
  FROM w t) r;
