import DataEngine
import InternalProtocol
import PostgresNIO

/// One item of a search's answer.
enum GeoItem: Sendable, Equatable {
    case point(GeoPoint)
    case cluster(GeoCluster)

    var json: JSONValue {
        switch self {
        case .point(let point): point.json
        case .cluster(let cluster): cluster.json
        }
    }
}

extension GeoStore {
    /// A page of the points a search finds, nearest or oldest first; with a cluster cell, a
    /// page of grid cells instead (a cell holding one point answers that point).
    func find(app: String, _ search: GeoSearch) async throws -> [GeoItem] {
        let search = try await resolvingFence(app: app, search)
        if let cell = search.clusterCell { return try await clusters(app: app, search, cell: cell) }
        return try await points(try GeoSearchSQL(app: app, search: search).selectPoints()).map(GeoItem.point)
    }

    /// How many points a search finds.
    func count(app: String, _ search: GeoSearch) async throws -> Int {
        let search = try await resolvingFence(app: app, search)
        let rows = try await database.query(
            try GeoSearchSQL(app: app, search: search).selectCount().query, logger: logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// A page of the points matching at least the threshold's share of `relative`'s members,
    /// best match first, each with its percentage.
    func relativeFind(app: String, _ search: GeoSearch, _ relative: RelativeFind) async throws -> [(GeoPoint, Double)] {
        let search = try await resolvingFence(app: app, search)
        let statement = GeoSearchSQL(app: app, search: search)
        var sql = SQL("SELECT \(Self.innerColumns), matches FROM (SELECT ")
        statement.pointColumns(into: &sql)
        sql.append(", p.created, (")
        sql.list(relative.metadata.members, separator: " + ") { sql, member in
            sql.append("(p.metadata @> ")
            sql.bind(.json(JSONValue.object(JSONObject([member])).jsonText))
            sql.append(")::int")
        }
        sql.append(") * 100.0::double precision / \(relative.metadata.members.count) AS matches FROM geo.points p")
        try statement.filter(into: &sql)
        sql.append(") p WHERE matches >= ")
        sql.bind(.double(relative.threshold))
        sql.append(" ORDER BY matches DESC, ")
        if search.center != nil { sql.append("distance, ") }
        sql.append("created, object_id")
        statement.page(into: &sql)
        var found: [(GeoPoint, Double)] = []
        let rows = try await database.query(sql.query, logger: logger)
        for try await row in rows {
            let (id, latitude, longitude, categories, metadata, distance, matches) = try row.decode(
                (String, Double, Double, [String], String?, Double?, Double).self)
            let point = GeoPoint(
                objectId: id, coordinate: try Coordinate(latitude: latitude, longitude: longitude),
                categories: categories,
                metadata: try metadata.map(Self.object), distance: distance)
            found.append((point, matches))
        }
        return found
    }
}

extension GeoStore {
    /// A point answer's columns as an outer select names those of an inner ``GeoSearchSQL/pointColumns(into:)``.
    fileprivate static let innerColumns = "p.object_id, p.st_y, p.st_x, p.categories, p.metadata, p.distance"
}
