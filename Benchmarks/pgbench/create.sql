-- The floor of a create: one INSERT returning the new object as JSON text.
\set k random(0, :buckets - 1)
INSERT INTO SCHEMA."Item" AS t ("objectId", k, name) VALUES (upper(gen_random_uuid()::text), :k, 'created')
RETURNING row_to_json(t)::text;
