-- The floor of a partial update: one UPDATE by primary key returning the object as JSON text.
\set n random(1, :rows)
\set v random(1, 1000000)
UPDATE SCHEMA."Item" AS t SET name = 'updated ' || :v, updated = now()
WHERE t."objectId" = '00000000-0000-4000-8000-' || lpad(:n::text, 12, '0') RETURNING row_to_json(t)::text;
