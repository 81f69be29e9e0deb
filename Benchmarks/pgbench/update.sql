-- The floor of a partial update, as the product writes it: one statement updating by primary
-- key, answering the object as JSON text in the wire projection, and emitting its change event
-- into the log when a real-time subscriber watches the table (here nobody does: a probe).
\set n random(1, :rows)
\set v random(1, 1000000)
WITH w AS (UPDATE SCHEMA."Item" AS t SET updated = date_trunc('milliseconds', now()), name = 'updated ' || :v
  WHERE t."objectId" = '00000000-0000-4000-8000-' || lpad(:n::text, 12, '0') RETURNING t.*)
SELECT o.object::text, CASE WHEN EXISTS (SELECT 1 FROM data.watched_tables
  WHERE app_id = 'APP_ID' AND table_name = 'Item' AND watched_until > now())
  THEN pg_logical_emit_message(true, 'baas.data/APP_ID/Item', json_build_object('event', 'updated', 'object', o.object)::text) END
FROM (SELECT row_to_json(r) AS object FROM (SELECT t."objectId", (extract(epoch from t.created) * 1000)::bigint AS created,
  (extract(epoch from t.updated) * 1000)::bigint AS updated, t."ownerId", t.k, t.name, 'Item'::text AS "___class"
  FROM w t) r) o;
