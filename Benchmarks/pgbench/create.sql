-- The floor of a create, as the product writes it: one statement inserting the object,
-- answering it as JSON text in the wire projection, and emitting its change event into the
-- log when a real-time subscriber watches the table (here nobody does: a primary-key probe).
\set k random(0, :buckets - 1)
WITH w AS (INSERT INTO SCHEMA."Item" AS t ("objectId", "ownerId", k, name)
  VALUES (upper(gen_random_uuid()::text), NULL, :k, 'created') RETURNING t.*)
SELECT o.object::text, CASE WHEN EXISTS (SELECT 1 FROM data.watched_tables
  WHERE app_id = 'APP_ID' AND table_name = 'Item' AND watched_until > now())
  THEN pg_logical_emit_message(true, 'baas.data/APP_ID/Item', json_build_object('event', 'created', 'object', o.object)::text) END
FROM (SELECT row_to_json(r) AS object FROM (SELECT t."objectId", (extract(epoch from t.created) * 1000)::bigint AS created,
  (extract(epoch from t.updated) * 1000)::bigint AS updated, t."ownerId", t.k, t.name, 'Item'::text AS "___class"
  FROM w t) r) o;
