import DataEngine
import InternalProtocol

/// The SQL of one search over `geo.points p`: the filter every statement shares, and the
/// expressions answers select. Client values are bound, never spliced.
struct GeoSearchSQL {
    let app: String
    let search: GeoSearch

    /// The position as plain longitude/latitude geometry (what the planar index holds).
    static let plane = "p.location::public.geometry"

    /// `WHERE …`: the app, the categories, the area, metadata equality and the where clause.
    func filter(into sql: inout SQL) throws(ErrorEnvelope) {
        sql.append(" WHERE p.app_id = ")
        sql.bind(.text(app))
        sql.append(" AND p.categories && ")
        sql.bind(.textArray(search.categories))
        switch search.area {
        case .everywhere: break
        case .radius(let radius):
            sql.append(" AND public.ST_DWithin(p.location, ")
            Self.point(radius.center, into: &sql)
            sql.append(", ")
            sql.bind(.double(radius.meters))
            sql.append(", false)")
        case .rectangle(let rectangle):
            sql.append(" AND (")
            sql.list(rectangle.longitudeRanges, separator: " OR ") { sql, range in
                sql.append("\(Self.plane) && public.ST_MakeEnvelope(")
                sql.bind(all: [.double(range.lowerBound), .double(rectangle.south), .double(range.upperBound), .double(rectangle.north)])
                sql.append(", 4326)")
            }
            sql.append(")")
        }
        if let metadata = search.metadataEquals {
            sql.append(" AND p.metadata @> ")
            sql.bind(.json(JSONValue.object(metadata).jsonText))
        }
        if let cell = search.cell {
            sql.append(" AND floor((public.ST_X(\(Self.plane)) + 180) / ")
            sql.bind(.double(cell.size))
            sql.append(") = ")
            sql.bind(.integer(cell.column))
            sql.append(" AND floor((public.ST_Y(\(Self.plane)) + 90) / ")
            sql.bind(.double(cell.size))
            sql.append(") = ")
            sql.bind(.integer(cell.row))
        }
        if let condition = search.condition {
            sql.append(" AND ")
            try MetadataCondition().compile(condition, into: &sql)
        }
    }

    /// The distance from the search's center in its units, or NULL.
    func distance(into sql: inout SQL) {
        guard let center = search.center else { return sql.append("NULL::double precision") }
        sql.append("public.ST_Distance(p.location, ")
        Self.point(center, into: &sql)
        sql.append(", false) / ")
        sql.bind(.double(search.unit.meters))
    }

    /// `ORDER BY`: nearest first when there is a center, then oldest first.
    func order(into sql: inout SQL) {
        sql.append(" ORDER BY ")
        if search.center != nil { sql.append("distance, ") }
        sql.append("p.created, p.object_id")
    }

    /// `LIMIT … OFFSET …`.
    func page(into sql: inout SQL) {
        sql.append(" LIMIT ")
        sql.bind(.integer(Int64(search.pageSize)))
        sql.append(" OFFSET ")
        sql.bind(.integer(Int64(search.offset)))
    }

    /// A bound position as a geography.
    static func point(_ coordinate: Coordinate, into sql: inout SQL) {
        sql.append("public.ST_SetSRID(public.ST_MakePoint(")
        sql.bind(all: [.double(coordinate.longitude), .double(coordinate.latitude)])
        sql.append("), 4326)::public.geography")
    }

    /// The columns a point answer reads: id, latitude, longitude, categories, metadata text (or
    /// NULL), distance (or NULL).
    func pointColumns(into sql: inout SQL) {
        sql.append("p.object_id, public.ST_Y(\(Self.plane)) AS st_y, public.ST_X(\(Self.plane)) AS st_x, p.categories, ")
        sql.append(search.includeMetadata ? "p.metadata::text AS metadata, " : "NULL::text AS metadata, ")
        distance(into: &sql)
        sql.append(" AS distance")
    }

    /// A grid cell's column and row for the cell size `size` (from -180° and -90°).
    static func cell(_ size: Double, into sql: inout SQL) {
        sql.append("floor((public.ST_X(\(plane)) + 180) / ")
        sql.bind(.double(size))
        sql.append(")::bigint AS cell_column, floor((public.ST_Y(\(plane)) + 90) / ")
        sql.bind(.double(size))
        sql.append(")::bigint AS cell_row")
    }
}
