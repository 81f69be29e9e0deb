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
        if let own = search.ownCategories {
            sql.append(" AND ((p.owner_id IS DISTINCT FROM ")
            sql.bind(.text(own.owner))
            sql.append(" AND p.categories && ")
            sql.bind(.textArray(search.categories))
            sql.append(") OR (p.owner_id = ")
            sql.bind(.text(own.owner))
            sql.append(" AND p.categories && ")
            sql.bind(.textArray(own.categories))
            sql.append("))")
        } else {
            sql.append(" AND p.categories && ")
            sql.bind(.textArray(search.categories))
        }
        switch search.area {
        case .everywhere: break
        case .radius(let radius):
            sql.append(" AND ")
            Self.within(radius.meters, of: radius.center, location: Self.points, into: &sql)
        case .rectangle(let rectangle):
            sql.append(" AND ")
            Self.inside(rectangle, location: Self.points, into: &sql)
        }
        if let fence = search.fenceArea {
            sql.append(" AND ")
            Self.inside(fence, location: Self.points, into: &sql)
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

    /// A page of the points found, with a point answer's columns.
    func selectPoints() throws(ErrorEnvelope) -> SQL {
        var sql = SQL("SELECT ")
        pointColumns(into: &sql)
        sql.append(" FROM geo.points p")
        try filter(into: &sql)
        order(into: &sql)
        page(into: &sql)
        return sql
    }

    /// How many points the search finds.
    func selectCount() throws(ErrorEnvelope) -> SQL {
        var sql = SQL("SELECT count(*) FROM geo.points p")
        try filter(into: &sql)
        return sql
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

    /// Writes a location expression (a geography) into a statement.
    typealias Location = @Sendable (inout SQL) -> Void

    /// The searched points' locations.
    static let points: Location = { $0.append("p.location") }

    /// `location` within `meters` of `center` on the sphere.
    static func within(_ meters: Double, of center: Coordinate, location: Location, into sql: inout SQL) {
        sql.append("public.ST_DWithin(")
        location(&sql)
        sql.append(", ")
        point(center, into: &sql)
        sql.append(", ")
        sql.bind(.double(meters))
        sql.append(", false)")
    }

    /// `location` inside or on the edge of `rectangle` (two boxes across the antimeridian).
    static func inside(_ rectangle: GeoRectangle, location: Location, into sql: inout SQL) {
        sql.append("(")
        sql.list(rectangle.longitudeRanges, separator: " OR ") { sql, range in
            // ST_Intersects, not a bare `&&`: bounding boxes are single-precision and rounded
            // outwards, so `&&` alone also finds points a few millimetres outside the edges.
            sql.append("public.ST_Intersects(")
            location(&sql)
            sql.append("::public.geometry, public.ST_MakeEnvelope(")
            sql.bind(all: [
                .double(range.lowerBound), .double(rectangle.south), .double(range.upperBound),
                .double(rectangle.north),
            ])
            sql.append(", 4326))")
        }
        sql.append(")")
    }

    /// `location` inside or on the edge of a fence's area.
    static func inside(_ area: GeoFence.Area, location: Location, into sql: inout SQL) {
        switch area {
        case .circle(let center, let meters): within(meters, of: center, location: location, into: &sql)
        case .rectangle(let rectangle): inside(rectangle, location: location, into: &sql)
        case .polygon(let corners):
            sql.append("public.ST_Covers(")
            polygon(corners, into: &sql)
            sql.append(", ")
            location(&sql)
            sql.append("::public.geometry)")
        }
    }

    /// A polygon in longitude and latitude, its ring closed here and bound as WKT text made only
    /// of numbers.
    static func polygon(_ corners: [Coordinate], into sql: inout SQL) {
        let ring = (corners + [corners[0]]).map { "\($0.longitude) \($0.latitude)" }.joined(separator: ",")
        sql.append("public.ST_GeomFromText(")
        sql.bind(.text("POLYGON((\(ring)))"))
        sql.append(", 4326)")
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
        sql.append(
            "p.object_id, public.ST_Y(\(Self.plane)) AS st_y, public.ST_X(\(Self.plane)) AS st_x, p.categories, ")
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
