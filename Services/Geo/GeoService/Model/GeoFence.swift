import DataEngine
import Foundation
import InternalProtocol

/// A geofence as the 4.x/5.x SDKs read it (`geofenceName`, `type`, `nodes`, `onStayDuration`):
/// a `CIRCLE` (the center, then a point on the edge), a `RECT` (north-west, then south-east
/// corner; west east of east crosses the antimeridian) or a `SHAPE` (a polygon's corners, its
/// edges straight in longitude and latitude), with the actions its events run.
struct GeoFence: Sendable {
    /// Where a fence's inside is.
    enum Area: Sendable {
        case circle(center: Coordinate, meters: Double)
        case rectangle(GeoRectangle)
        case polygon([Coordinate])
    }

    /// The events a fence has actions for.
    enum Event: String, CaseIterable, Sendable {
        case enter = "onenter", stay = "onstay", exit = "onexit"
    }

    let name: String
    let type: String
    let nodes: [Coordinate]
    let area: Area
    /// Seconds a point must have been inside before `onstay` counts it.
    let onStayDuration: Int
    /// Each configured event's action, as given (recorded with each event it runs for).
    let actions: [String: JSONValue]

    /// A fence from its definition (4060 when it describes no valid area).
    init(definition object: JSONObject) throws(ErrorEnvelope) {
        guard let name = (object["geofenceName"] ?? object["name"])?.string, (1...100).contains(name.count),
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw GeoError.invalidFence("'name' must be 1 to 100 characters") }
        self.name = name
        type = object["type"]?.string?.uppercased() ?? ""
        var nodes: [Coordinate] = []
        for node in object["nodes"]?.array ?? [] {
            guard let node = node.object else { throw GeoError.invalidFence("every node is {latitude, longitude}") }
            do {
                nodes.append(try Coordinate(json: node))
            } catch {
                throw GeoError.invalidFence(error.message)
            }
        }
        self.nodes = nodes
        area = try Self.area(type, nodes)
        let stay = object["onStayDuration"]?.integerValue ?? 0
        guard (0...86_400 * 365).contains(stay) else {
            throw GeoError.invalidFence("'onStayDuration' is seconds, 0 to a year")
        }
        onStayDuration = Int(stay)
        var actions: [String: JSONValue] = [:]
        if let given = object["actions"] {
            guard let members = given.object?.members else {
                throw GeoError.invalidFence("'actions' maps onenter, onstay and onexit to actions")
            }
            for (event, action) in members {
                guard Event(rawValue: event) != nil, action.object != nil else {
                    throw GeoError.invalidFence("'actions' maps onenter, onstay and onexit to action objects")
                }
                actions[event] = action
            }
        }
        self.actions = actions
    }

    private static func area(_ type: String, _ nodes: [Coordinate]) throws(ErrorEnvelope) -> Area {
        switch type {
        case "CIRCLE":
            guard nodes.count == 2 else {
                throw GeoError.invalidFence("a CIRCLE has two nodes: its center and a point on its edge")
            }
            return .circle(center: nodes[0], meters: Sphere.distance(nodes[0], nodes[1]))
        case "RECT":
            guard nodes.count == 2, nodes[0].latitude >= nodes[1].latitude else {
                throw GeoError.invalidFence("a RECT has two nodes: its north-west and south-east corners")
            }
            return .rectangle(
                GeoRectangle(
                    north: nodes[0].latitude, west: nodes[0].longitude, south: nodes[1].latitude,
                    east: nodes[1].longitude))
        case "SHAPE":
            guard (3...1000).contains(nodes.count) else { throw GeoError.invalidFence("a SHAPE has 3 to 1000 nodes") }
            return .polygon(nodes)
        default:
            throw GeoError.invalidFence("'type' must be CIRCLE, RECT or SHAPE")
        }
    }

    /// The definition as stored and listed.
    var json: JSONValue {
        var object = JSONObject([
            ("geofenceName", .string(name)), ("type", .string(type)),
            (
                "nodes",
                .array(
                    nodes.map {
                        .object(JSONObject([("latitude", .number($0.latitude)), ("longitude", .number($0.longitude))]))
                    })
            ),
            ("onStayDuration", .integer(Int64(onStayDuration))),
        ])
        if !actions.isEmpty {
            object["actions"] = .object(JSONObject(actions.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
        }
        return .object(object)
    }
}

extension Sphere {
    /// The great-circle distance in metres (haversine), as PostGIS measures on this sphere.
    static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        let (φ1, φ2) = (a.latitude * .pi / 180, b.latitude * .pi / 180)
        let Δλ = (b.longitude - a.longitude) * .pi / 180
        let h = pow(sin((φ2 - φ1) / 2), 2) + cos(φ1) * cos(φ2) * pow(sin(Δλ / 2), 2)
        return 2 * radius * asin(min(1, h.squareRoot()))
    }
}
