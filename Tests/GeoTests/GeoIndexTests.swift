import DataEngine
import Foundation
import PostgresNIO
import TestSupport
import Testing

@testable import GeoService

/// On 1,000,000 points, the statements radius and rectangle searches send use the GiST indexes.
@Suite(.timeLimit(.minutes(10))) struct GeoIndexTests {
    @Test func radiusAndRectangleSearchesUseTheGiSTIndexes() async throws {
        try await GeoFixture.with { fixture in
            let database = fixture.store.database
            // Set-up only: a million random points written in one statement (saving them one by
            // one through the store would take minutes and prove nothing more here).
            try await database.query(
                """
                INSERT INTO geo.points (app_id, object_id, location, categories, created)
                SELECT CASE WHEN i % 100 = 0 THEN 'other' ELSE \(fixture.app) END, 'P' || i,
                    public.ST_SetSRID(public.ST_MakePoint(random() * 360 - 180, random() * 180 - 90), 4326)::public.geography,
                    ARRAY['Default'], i
                FROM generate_series(1, 1000000) AS i
                """, logger: TestDatabase.logger)
            try await database.query("ANALYZE geo.points", logger: TestDatabase.logger)

            var radius = GeoSearch()
            radius.area = .radius(.init(center: try Coordinate(latitude: 48.85, longitude: 2.35), meters: 20_000))
            radius.center = try Coordinate(latitude: 48.85, longitude: 2.35)
            var rectangle = GeoSearch()
            rectangle.area = .rectangle(GeoRectangle(north: 41, west: -74.5, south: 40, east: -73.5))
            var acrossTheAntimeridian = GeoSearch()
            acrossTheAntimeridian.area = .rectangle(GeoRectangle(north: 1, west: 179.5, south: -1, east: -179.5))
            for (name, search, index) in [
                ("radius", radius, "points_on_sphere"), ("rectangle", rectangle, "points_on_plane"),
                ("antimeridian", acrossTheAntimeridian, "points_on_plane"),
            ] {
                for statement in [
                    try GeoSearchSQL(app: fixture.app, search: search).selectPoints(),
                    try GeoSearchSQL(app: fixture.app, search: search).selectCount(),
                ] {
                    let plan = try await explain(statement, on: database)
                    #expect(plan.contains("\"Index Name\": \"\(index)\""), "\(name) does not use \(index): \(plan)")
                    #expect(!plan.contains("\"Seq Scan\""), "\(name) scans the table: \(plan)")
                }
            }
        }
    }

    private func explain(_ sql: SQL, on database: PostgresClient) async throws -> String {
        let rows = try await database.query(
            PostgresQuery(unsafeSQL: "EXPLAIN (FORMAT JSON) " + sql.text, binds: sql.bindings),
            logger: TestDatabase.logger)
        var plan = ""
        for try await line in rows.decode(String.self) { plan += line }
        return plan
    }
}
