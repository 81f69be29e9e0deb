-- The floor of a radius search: the same ST_DWithin query on the sphere, nearest ten first,
-- each row rendered as the JSON the service answers.
\set k random(0, 43199)
\set lat :k % 120 - 60
\set lon (:k / 120) % 360 - 180
SELECT json_build_object('___class', 'GeoPoint', 'objectId', p.object_id, 'latitude', public.ST_Y(p.location::public.geometry),
  'longitude', public.ST_X(p.location::public.geometry), 'categories', p.categories, 'distance', d.distance)::text
FROM geo.points p,
  LATERAL (SELECT public.ST_Distance(p.location, public.ST_SetSRID(public.ST_MakePoint(:lon, :lat), 4326)::public.geography, false) / 1000
    AS distance) d
WHERE p.app_id = 'APP_ID' AND p.categories && ARRAY['Default']
  AND public.ST_DWithin(p.location, public.ST_SetSRID(public.ST_MakePoint(:lon, :lat), 4326)::public.geography, 200000, false)
ORDER BY d.distance, p.created, p.object_id LIMIT 10;
