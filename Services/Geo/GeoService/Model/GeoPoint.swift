import DataEngine

/// A saved point as answers carry it.
struct GeoPoint: Sendable, Equatable {
    let objectId: String
    let coordinate: Coordinate
    let categories: [String]
    /// Nil when the answer leaves metadata out.
    var metadata: JSONObject?
    /// Distance from the search's center in its units, when it has one.
    var distance: Double?

    /// `{"___class":"GeoPoint","objectId",…}`: the shape every SDK generation reads.
    var json: JSONValue {
        var object = JSONObject([
            ("___class", .string("GeoPoint")), ("objectId", .string(objectId)),
            ("latitude", .number(coordinate.latitude)), ("longitude", .number(coordinate.longitude)),
            ("categories", .array(categories.map(JSONValue.string))),
        ])
        if let metadata { object["metadata"] = .object(metadata) }
        if let distance { object["distance"] = .number(distance) }
        return .object(object)
    }
}

/// A grid cell holding more than one point of a search.
struct GeoCluster: Sendable, Equatable {
    let id: GeoClusterID
    /// The mean of its points' positions.
    let coordinate: Coordinate
    let categories: [String]
    let totalPoints: Int
    /// Each member's distinct values (one value, or a list of them), when asked for.
    var metadata: JSONObject?

    var json: JSONValue {
        var object = JSONObject([
            ("___class", .string("GeoCluster")), ("objectId", .string(id.description)),
            ("latitude", .number(coordinate.latitude)), ("longitude", .number(coordinate.longitude)),
            ("categories", .array(categories.map(JSONValue.string))), ("totalPoints", .integer(Int64(totalPoints))),
        ])
        if let metadata { object["metadata"] = .object(metadata) }
        return .object(object)
    }
}

/// A cluster's grid cell: column and row counted from -180° and -90° in cells of `size` degrees.
/// Its text form (`cluster_{column}_{row}_{size}`) is the cluster's objectId, so listing a
/// cluster's points needs no state on the server.
struct GeoClusterID: Sendable, Hashable, CustomStringConvertible {
    let column: Int64
    let row: Int64
    let size: Double

    init(column: Int64, row: Int64, size: Double) {
        self.column = column
        self.row = row
        self.size = size
    }

    /// The cell an objectId names, or nil.
    init?(_ text: String) {
        let parts = text.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "cluster", let column = Int64(parts[1]), let row = Int64(parts[2]),
            let size = Double(parts[3]), size.isFinite, size >= GeoSearch.smallestCell, size <= 360
        else { return nil }
        self.init(column: column, row: row, size: size)
    }

    var description: String { "cluster_\(column)_\(row)_\(size)" }
}
