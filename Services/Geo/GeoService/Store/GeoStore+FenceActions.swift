import DataEngine
import InternalProtocol
import PostgresNIO

/// Whom a fence action runs for: every saved point of the app, or one position a client
/// reports (a saved point's id, its coordinates, or both: the coordinates win).
enum FenceSubject: Sendable {
    case savedPoints
    case position(id: String?, coordinate: Coordinate?)
}

extension GeoStore {
    /// Runs `event` of `fence` for `subject` and answers for how many points it ran: `onenter`
    /// for points inside that were not (they are inside from now on), `onstay` for points inside
    /// for at least the fence's stay duration, `onexit` for points that were inside and are not
    /// any more (deleted points included). Each run is recorded in `geo.fence_events`; the
    /// presence change and the record are one statement, so concurrent calls count a point once.
    func runFenceAction(app: String, fence: GeoFence, _ event: GeoFence.Event, for subject: FenceSubject) async throws
        -> Int
    {
        guard fence.actions[event.rawValue] != nil else {
            throw GeoError.actionNotConfigured(event.rawValue, fence: fence.name)
        }
        let now = Self.now()
        var sql = SQL()
        let location: GeoSearchSQL.Location
        let pointID: String?
        switch subject {
        case .savedPoints:
            location = GeoSearchSQL.points
            pointID = nil
        case .position(let id, let coordinate?):
            location = { GeoSearchSQL.point(coordinate, into: &$0) }
            pointID = id
        case .position(let id?, nil):
            location = { sql in
                sql.append("(SELECT location FROM geo.points WHERE app_id = ")
                sql.bind(.text(app))
                sql.append(" AND object_id = ")
                sql.bind(.text(id))
                sql.append(")")
            }
            pointID = id
        case .position(nil, nil):
            throw GeoError.invalidBody("A fence action's point needs an objectId or coordinates")
        }
        let scope = FenceScope(
            app: app, fence: fence, now: now, location: location, pointID: pointID, savedPoints: subject.isSavedPoints)
        switch event {
        case .enter: scope.enter(into: &sql)
        case .stay: scope.stay(into: &sql)
        case .exit: scope.exit(into: &sql)
        }
        return try await database.query(sql.query, logger: logger).collect().count
    }

    /// A page of the events a fence's actions recorded, oldest first:
    /// `[{event, objectId, at}]`.
    func fenceEvents(app: String, fence: String, pageSize: Int, offset: Int) async throws -> [JSONValue] {
        let rows = try await database.query(
            """
            SELECT event, point_id, at FROM geo.fence_events WHERE app_id = \(app) AND fence = \(fence)
            ORDER BY id LIMIT \(pageSize) OFFSET \(offset)
            """, logger: logger)
        var events: [JSONValue] = []
        for try await (event, point, at) in rows.decode((String, String?, Int64).self) {
            events.append(
                .object(
                    JSONObject([
                        ("event", .string(event)), ("objectId", point.map(JSONValue.string) ?? .null),
                        ("at", .integer(at)),
                    ])))
        }
        return events
    }
}

extension FenceSubject {
    fileprivate var isSavedPoints: Bool {
        if case .savedPoints = self { return true }
        return false
    }
}

/// The statements of one fence action.
private struct FenceScope {
    let app: String
    let fence: GeoFence
    let now: Int64
    let location: GeoSearchSQL.Location
    let pointID: String?
    let savedPoints: Bool

    /// Points inside become present; a position without an id is only recorded.
    func enter(into sql: inout SQL) {
        if savedPoints || pointID != nil {
            sql.append("WITH moved AS (INSERT INTO geo.fence_presence (app_id, fence, point_id, entered) SELECT ")
            sql.bind(all: [.text(app), .text(fence.name)])
            sql.append(savedPoints ? ", p.object_id, " : ", ")
            if !savedPoints {
                sql.bind(.text(pointID ?? ""))
                sql.append(", ")
            }
            sql.bind(.integer(now))
            fromInside(true, into: &sql)
            sql.append(" ON CONFLICT DO NOTHING RETURNING point_id) ")
            record(.enter, from: "moved", into: &sql)
        } else {
            recordPosition(.enter, inside: true, into: &sql)
        }
    }

    /// Present points still inside, present for at least the stay duration.
    func stay(into sql: inout SQL) {
        guard savedPoints || pointID != nil else { return recordPosition(.stay, inside: true, into: &sql) }
        sql.append("WITH moved AS (SELECT f.point_id FROM geo.fence_presence f")
        if savedPoints { sql.append(" JOIN geo.points p ON p.app_id = f.app_id AND p.object_id = f.point_id") }
        sql.append(" WHERE f.app_id = ")
        sql.bind(.text(app))
        sql.append(" AND f.fence = ")
        sql.bind(.text(fence.name))
        if let pointID, !savedPoints {
            sql.append(" AND f.point_id = ")
            sql.bind(.text(pointID))
        }
        sql.append(" AND f.entered <= ")
        sql.bind(.integer(now - Int64(fence.onStayDuration) * 1000))
        sql.append(" AND ")
        GeoSearchSQL.inside(fence.area, location: location, into: &sql)
        sql.append(") ")
        record(.stay, from: "moved", into: &sql)
    }

    /// Present points no longer inside (or gone) stop being present.
    func exit(into sql: inout SQL) {
        guard savedPoints || pointID != nil else { return recordPosition(.exit, inside: false, into: &sql) }
        sql.append("WITH moved AS (DELETE FROM geo.fence_presence f WHERE f.app_id = ")
        sql.bind(.text(app))
        sql.append(" AND f.fence = ")
        sql.bind(.text(fence.name))
        if savedPoints {
            sql.append(
                " AND NOT EXISTS (SELECT 1 FROM geo.points p WHERE p.app_id = f.app_id AND p.object_id = f.point_id AND "
            )
            GeoSearchSQL.inside(fence.area, location: location, into: &sql)
            sql.append(")")
        } else {
            sql.append(" AND f.point_id = ")
            sql.bind(.text(pointID ?? ""))
            sql.append(" AND NOT coalesce(")
            GeoSearchSQL.inside(fence.area, location: location, into: &sql)
            sql.append(", false)")
        }
        sql.append(" RETURNING f.point_id) ")
        record(.exit, from: "moved", into: &sql)
    }

    /// ` FROM geo.points p WHERE …` for saved points, or ` WHERE …` for one position, inside or
    /// not.
    private func fromInside(_ inside: Bool, into sql: inout SQL) {
        if savedPoints {
            sql.append(" FROM geo.points p WHERE p.app_id = ")
            sql.bind(.text(app))
            sql.append(" AND ")
        } else {
            sql.append(" WHERE ")
        }
        sql.append(inside ? "coalesce(" : "NOT coalesce(")
        GeoSearchSQL.inside(fence.area, location: location, into: &sql)
        sql.append(", false)")
    }

    /// `INSERT INTO geo.fence_events … SELECT … FROM moved RETURNING 1`.
    private func record(_ event: GeoFence.Event, from source: String, into sql: inout SQL) {
        sql.append("INSERT INTO geo.fence_events (app_id, fence, event, point_id, at) SELECT ")
        sql.bind(all: [.text(app), .text(fence.name), .text(event.rawValue)])
        sql.append(", point_id, ")
        sql.bind(.integer(now))
        sql.append(" FROM \(source) RETURNING 1")
    }

    /// One position without an id: the event is recorded when it is inside (or, for exit, not).
    private func recordPosition(_ event: GeoFence.Event, inside: Bool, into sql: inout SQL) {
        sql.append("INSERT INTO geo.fence_events (app_id, fence, event, point_id, at) SELECT ")
        sql.bind(all: [.text(app), .text(fence.name), .text(event.rawValue)])
        sql.append(", NULL, ")
        sql.bind(.integer(now))
        fromInside(inside, into: &sql)
        sql.append(" RETURNING 1")
    }
}
