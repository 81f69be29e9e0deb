import DataEngine
import InternalProtocol
import PostgresNIO
import PostgresSupport

/// A category as answers carry it: its name, objectId and how many points it holds.
struct GeoCategory: Sendable, Equatable {
    let objectId: String
    let name: String
    let size: Int

    var json: JSONValue {
        .object(
            JSONObject([("objectId", .string(objectId)), ("name", .string(name)), ("size", .integer(Int64(size)))]))
    }
}

extension GeoStore {
    /// Every category of the app with its point count, Default first (created on first use).
    func categories(app: String) async throws -> [GeoCategory] {
        try await ensureDefault(app: app)
        let rows = try await database.query(
            """
            SELECT c.object_id, c.name, (SELECT count(*) FROM geo.points p WHERE p.app_id = c.app_id AND p.categories @> ARRAY[c.name])
            FROM geo.categories c WHERE c.app_id = \(app) ORDER BY c.name <> 'Default', c.name COLLATE "C"
            """, logger: logger)
        var categories: [GeoCategory] = []
        for try await (id, name, size) in rows.decode((String, String, Int).self) {
            categories.append(GeoCategory(objectId: id, name: name, size: size))
        }
        return categories
    }

    /// The category `name`, created when missing (the same answer either way).
    func createCategory(app: String, name: String) async throws -> GeoCategory {
        var sql = Self.namingCategories(app: app, [name])
        sql.append("SELECT 1")
        try await database.run(sql.query, logger: logger)
        guard let category = try await categories(app: app).first(where: { $0.name == name }) else {
            throw GeoError.categoryNotFound(name)
        }
        return category
    }

    /// Removes the category `name` from the app and from its points, and the points it was the
    /// only category of; false when there is no such category.
    func deleteCategory(app: String, name: String) async throws -> Bool {
        try await database.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                "DELETE FROM geo.categories WHERE app_id = \(app) AND name = \(name) RETURNING 1", logger: logger)
            var found = false
            for try await _ in rows { found = true }
            guard found else { return false }
            try await connection.run(
                "DELETE FROM geo.points WHERE app_id = \(app) AND categories = ARRAY[\(name)]::text[]", logger: logger)
            try await connection.run(
                """
                UPDATE geo.points SET categories = array_remove(categories, \(name)), updated = \(Self.now())
                WHERE app_id = \(app) AND categories @> ARRAY[\(name)]::text[]
                """, logger: logger)
            return true
        }
    }

    private func ensureDefault(app: String) async throws {
        var sql = Self.namingCategories(app: app, [GeoCategoryName.standard])
        sql.append("SELECT 1")
        try await database.run(sql.query, logger: logger)
    }
}
