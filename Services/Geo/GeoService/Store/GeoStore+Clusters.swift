import DataEngine
import InternalProtocol
import PostgresNIO

extension GeoStore {
    /// The most distinct values one member of a cluster's merged metadata lists.
    static let clusterValuesPerMember = 32

    /// A page of the grid cells a search's points fall in, in column then row order, grouped in
    /// SQL: a cell of one point answers the point, a fuller cell a cluster at its points' mean
    /// position with the union of their categories.
    func clusters(app: String, _ search: GeoSearch, cell size: Double) async throws -> [GeoItem] {
        let statement = GeoSearchSQL(app: app, search: search)
        var sql = SQL(
            "SELECT cell_column, cell_row, count(*), avg(st_y), avg(st_x), string_agg(DISTINCT array_to_string(categories, ','), ','),"
        )
        sql.append(" min(object_id), min(metadata), min(distance) FROM (SELECT ")
        statement.pointColumns(into: &sql)
        sql.append(", ")
        GeoSearchSQL.cell(size, into: &sql)
        sql.append(" FROM geo.points p")
        try statement.filter(into: &sql)
        sql.append(") p GROUP BY cell_column, cell_row ORDER BY cell_column, cell_row")
        statement.page(into: &sql)
        var items: [GeoItem] = []
        let rows = try await database.query(sql.query, logger: logger)
        for try await (column, row, count, latitude, longitude, categoryLists, id, metadata, distance) in rows.decode(
            (Int64, Int64, Int, Double, Double, String, String, String?, Double?).self)
        {
            let coordinate = try Coordinate(
                latitude: min(max(latitude, -90), 90), longitude: min(max(longitude, -180), 180))
            let categories = Set(categoryLists.split(separator: ",").map(String.init)).sorted {
                $0.utf8.lexicographicallyPrecedes($1.utf8)
            }
            if count == 1 {
                items.append(
                    .point(
                        GeoPoint(
                            objectId: id, coordinate: coordinate, categories: categories,
                            metadata: try metadata.map(Self.object), distance: distance)))
            } else {
                items.append(
                    .cluster(
                        GeoCluster(
                            id: GeoClusterID(column: column, row: row, size: size), coordinate: coordinate,
                            categories: categories, totalPoints: count)))
            }
        }
        return search.includeMetadata ? try await mergingMetadata(into: items, app: app, search) : items
    }

    /// `items` with each cluster's metadata: every member its points carry, with its distinct
    /// values (one value as itself, several as a list of at most ``clusterValuesPerMember``).
    private func mergingMetadata(into items: [GeoItem], app: String, _ search: GeoSearch) async throws -> [GeoItem] {
        let clusters = items.compactMap { item -> GeoClusterID? in
            if case .cluster(let cluster) = item { return cluster.id }
            return nil
        }
        guard let size = clusters.first?.size else { return items }
        var sql = SQL(
            "SELECT cell_column, cell_row, m.key, (array_agg(DISTINCT m.value::text))[1:\(Self.clusterValuesPerMember)] FROM (SELECT p.metadata, "
        )
        GeoSearchSQL.cell(size, into: &sql)
        sql.append(" FROM geo.points p")
        try GeoSearchSQL(app: app, search: search).filter(into: &sql)
        sql.append(
            ") p CROSS JOIN LATERAL jsonb_each(p.metadata) m WHERE cell_column::text || ':' || cell_row::text = ANY(")
        sql.bind(.textArray(clusters.map { "\($0.column):\($0.row)" }))
        sql.append(") GROUP BY cell_column, cell_row, m.key ORDER BY m.key")
        var merged: [String: JSONObject] = [:]
        let rows = try await database.query(sql.query, logger: logger)
        for try await (column, row, key, values) in rows.decode((Int64, Int64, String, [String]).self) {
            let parsed = try values.map { try JSONParser.parse($0) }
            merged["\(column):\(row)", default: JSONObject()][key] = parsed.count == 1 ? parsed[0] : .array(parsed)
        }
        return items.map { item in
            guard case .cluster(var cluster) = item else { return item }
            cluster.metadata = merged["\(cluster.id.column):\(cluster.id.row)"] ?? JSONObject()
            return .cluster(cluster)
        }
    }
}
