import DataEngine
import InternalProtocol
import PostgresNIO

extension GeoStore {
    /// Creates the fence, or replaces the one of the same name (whose points stay inside).
    func saveFence(app: String, _ fence: GeoFence) async throws -> String {
        if case .polygon = fence.area { try await requireSimplePolygon(fence) }
        let definition = fence.json.jsonText
        let rows = try await database.query(
            """
            INSERT INTO geo.fences (app_id, name, object_id, definition, created)
            VALUES (\(app), \(fence.name), upper(gen_random_uuid()::text), \(definition)::jsonb, \(Self.now()))
            ON CONFLICT (app_id, name) DO UPDATE SET definition = excluded.definition
            RETURNING object_id
            """, logger: logger)
        for try await id in rows.decode(String.self) { return id }
        throw GeoError.fenceNotFound(fence.name)
    }

    /// Every fence of the app (or the one named), by name.
    func fences(app: String, named name: String? = nil) async throws -> [(id: String, fence: GeoFence)] {
        let rows = try await database.query(
            """
            SELECT object_id, definition::text FROM geo.fences
            WHERE app_id = \(app) AND (\(name)::text IS NULL OR name = \(name)) ORDER BY name COLLATE "C"
            """, logger: logger)
        var fences: [(id: String, fence: GeoFence)] = []
        for try await (id, definition) in rows.decode((String, String).self) {
            fences.append((id, try GeoFence(definition: try Self.object(definition))))
        }
        return fences
    }

    /// The fence `name` (4061 when there is none).
    func fence(app: String, name: String) async throws -> GeoFence {
        guard let found = try await fences(app: app, named: name).first else { throw GeoError.fenceNotFound(name) }
        return found.fence
    }

    /// Removes the fence with its presence and events; false when there was none.
    func deleteFence(app: String, name: String) async throws -> Bool {
        let rows = try await database.query(
            "DELETE FROM geo.fences WHERE app_id = \(app) AND name = \(name) RETURNING 1", logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// `search` with its named fence's area looked up (4061 when there is no such fence).
    func resolvingFence(app: String, _ search: GeoSearch) async throws -> GeoSearch {
        guard let name = search.fence, search.fenceArea == nil else { return search }
        var resolved = search
        resolved.fenceArea = try await fence(app: app, name: name).area
        return resolved
    }

    /// 4060 unless a polygon's edges are a simple ring PostGIS can test points against.
    private func requireSimplePolygon(_ fence: GeoFence) async throws {
        var sql = SQL("SELECT public.ST_IsValid(")
        GeoSearchSQL.polygon(fence.nodes, into: &sql)
        sql.append(")")
        let rows = try await database.query(sql.query, logger: logger)
        for try await valid in rows.decode(Bool.self) where valid { return }
        throw GeoError.invalidFence("a SHAPE's edges must not cross each other")
    }
}
