import DataEngine
import Foundation
import InternalProtocol
import Logging
import PostgresNIO

/// Every app's points and categories in `geo.points` and `geo.categories`. A write that names a
/// category creates it in the same statement.
struct GeoStore: Sendable {
    let database: PostgresClient
    let logger: Logger

    /// What a write sets; nil members of a partial update keep the point's values.
    struct Change: Sendable {
        var coordinate: Coordinate?
        var categories: [String]?
        var metadata: JSONObject?
    }

    /// A point answer's columns, metadata included.
    static let columns = """
        p.object_id, public.ST_Y(\(GeoSearchSQL.plane)), public.ST_X(\(GeoSearchSQL.plane)), p.categories, \
        p.metadata::text, NULL::double precision
        """

    /// Saves a new point (categories default to Default, metadata to none).
    func insert(app: String, _ change: Change, owner: String?) async throws -> GeoPoint {
        guard let coordinate = change.coordinate else {
            throw GeoError.invalidBody("The point needs 'latitude' and 'longitude'")
        }
        let categories = change.categories ?? [GeoCategoryName.standard]
        var sql = Self.namingCategories(app: app, categories)
        sql.append(
            "INSERT INTO geo.points AS p (app_id, object_id, location, categories, metadata, created, owner_id) VALUES ("
        )
        sql.bind(all: [.text(app), .text(UUID().uuidString)])
        sql.append(", ")
        GeoSearchSQL.point(coordinate, into: &sql)
        sql.append(", ")
        sql.bind(all: [
            .textArray(categories), .json(JSONValue.object(change.metadata ?? JSONObject()).jsonText),
            .integer(Self.now()),
            owner.map(SQLValue.text) ?? .null("text"),
        ])
        sql.append(") RETURNING \(Self.columns)")
        guard let point = try await points(sql).first else { throw GeoError.invalidBody("The point was not saved") }
        return point
    }

    /// Changes the point `id`: members of `change` that are nil keep their values (4008 when
    /// there is no such point, or with `checked` when its categories are no longer those).
    func update(app: String, id: String, _ change: Change, checked: [String]? = nil) async throws -> GeoPoint {
        var sql = Self.namingCategories(app: app, change.categories ?? [])
        sql.append("UPDATE geo.points AS p SET updated = ")
        sql.bind(.integer(Self.now()))
        if let coordinate = change.coordinate {
            sql.append(", location = ")
            GeoSearchSQL.point(coordinate, into: &sql)
        }
        if let categories = change.categories {
            sql.append(", categories = ")
            sql.bind(.textArray(categories))
        }
        if let metadata = change.metadata {
            sql.append(", metadata = ")
            sql.bind(.json(JSONValue.object(metadata).jsonText))
        }
        sql.append(" WHERE p.app_id = ")
        sql.bind(.text(app))
        sql.append(" AND p.object_id = ")
        sql.bind(.text(id))
        if let checked {
            sql.append(" AND p.categories = ")
            sql.bind(.textArray(checked))
        }
        sql.append(" RETURNING \(Self.columns)")
        guard let point = try await points(sql).first else { throw GeoError.pointNotFound(id) }
        return point
    }

    /// Removes the point `id`; false when there was none (or, with `checked`, when its categories
    /// are no longer those).
    func delete(app: String, id: String, checked: [String]? = nil) async throws -> Bool {
        let rows = try await database.query(
            """
            DELETE FROM geo.points WHERE app_id = \(app) AND object_id = \(id)
            AND (\(checked == nil) OR categories = \(checked ?? [])::text[]) RETURNING 1
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// The point `id` with its metadata, or nil.
    func point(app: String, id: String) async throws -> GeoPoint? {
        var sql = SQL("SELECT \(Self.columns) FROM geo.points p WHERE p.app_id = ")
        sql.bind(.text(app))
        sql.append(" AND p.object_id = ")
        sql.bind(.text(id))
        return try await points(sql).first
    }

    /// What permission decisions on one point need to know.
    struct PointAccess: Sendable {
        let id: String
        let categories: [String]
        let ownerID: String?
    }

    /// The point's categories and owner, or nil when the app has no such point.
    func access(app: String, id: String) async throws -> PointAccess? {
        let rows = try await database.query(
            "SELECT categories, owner_id FROM geo.points WHERE app_id = \(app) AND object_id = \(id)", logger: logger)
        for try await (categories, owner) in rows.decode(([String], String?).self) {
            return PointAccess(id: id, categories: categories, ownerID: owner)
        }
        return nil
    }

    /// The rows of a statement selecting a point answer's columns.
    func points(_ sql: SQL) async throws -> [GeoPoint] {
        var points: [GeoPoint] = []
        let rows = try await database.query(sql.query, logger: logger)
        for try await (id, latitude, longitude, categories, metadata, distance) in rows.decode(
            (String, Double, Double, [String], String?, Double?).self)
        {
            points.append(
                GeoPoint(
                    objectId: id, coordinate: try Coordinate(latitude: latitude, longitude: longitude),
                    categories: categories,
                    metadata: try metadata.map(Self.object), distance: distance))
        }
        return points
    }

    /// Stored metadata text as an object.
    static func object(_ text: String) throws -> JSONObject {
        try JSONParser.parse(text).object ?? JSONObject()
    }

    /// `WITH named AS (…)`: creates the categories a write names that do not exist yet.
    static func namingCategories(app: String, _ categories: [String]) -> SQL {
        var sql = SQL("WITH named AS (INSERT INTO geo.categories (app_id, name, object_id, created) SELECT ")
        sql.bind(.text(app))
        sql.append(", name, upper(gen_random_uuid()::text), ")
        sql.bind(.integer(now()))
        sql.append(" FROM unnest(")
        sql.bind(.textArray(categories))
        sql.append(") AS name ON CONFLICT DO NOTHING) ")
        return sql
    }

    /// Now in epoch milliseconds.
    static func now() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
