import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import ServiceRuntime

/// Geofences: the list every key may read (the SDKs monitor fences on the device), management
/// with the server-code key, and the enter, stay and exit actions.
struct GeoFenceRoutes: Sendable {
    let store: GeoStore

    func add(to routes: inout PublicRoutes) {
        routes.add(.get, "geo/fences", options: GeoRoutes.options, doc: .geoFences) { call in
            let name = try? call.queryItems.first { $0.name == "geoFence" }?.value
            let fences = try await store.fences(app: call.identity.appId, named: name.flatMap { $0.isEmpty ? nil : $0 })
            return .json(.array(fences.map { id, fence in Self.json(fence, id: id) }))
        }
        routes.add(.post, "geo/fences", options: GeoRoutes.options, doc: .saveGeoFence) { call in
            try Self.requireServerCode(call)
            guard let definition = try call.geoJSON?.object else {
                throw GeoError.invalidFence("the body must be a JSON object")
            }
            let fence = try GeoFence(definition: definition)
            return .json(Self.json(fence, id: try await store.saveFence(app: call.identity.appId, fence)))
        }
        routes.add(.delete, "geo/fences/:name", options: GeoRoutes.options, doc: .deleteGeoFence) { call in
            try Self.requireServerCode(call)
            guard try await store.deleteFence(app: call.identity.appId, name: call.parameter("name")) else {
                throw GeoError.fenceNotFound(call.parameter("name"))
            }
            return .json(.object(JSONObject([("result", .bool(true))])))
        }
        routes.add(.get, "geo/fences/:name/events", options: GeoRoutes.options, doc: .geoFenceEvents) { call in
            try Self.requireServerCode(call)
            let search = try call.geoSearch()
            let name = call.parameter("name")
            _ = try await store.fence(app: call.identity.appId, name: name)
            let events = try await store.fenceEvents(
                app: call.identity.appId, fence: name, pageSize: search.pageSize, offset: search.offset)
            return .json(.array(events))
        }
        routes.add(.post, "geo/fence/:event", options: GeoRoutes.options, doc: .runGeoFenceAction) { call in
            guard let event = GeoFence.Event(rawValue: call.parameter("event").lowercased()) else {
                throw GeoError.invalidParameter("The fence action is onenter, onstay or onexit")
            }
            guard let name = try? call.queryItems.first(where: { $0.name == "geoFence" })?.value, !name.isEmpty else {
                throw GeoError.invalidParameter("Query parameter 'geoFence' names the fence")
            }
            let fence = try await store.fence(app: call.identity.appId, name: name)
            let count = try await store.runFenceAction(
                app: call.identity.appId, fence: fence, event, for: try Self.subject(call))
            return .json(.integer(Int64(count)))
        }
    }

    /// The body's point, or every saved point when there is none.
    private static func subject(_ call: PublicCall) throws(ErrorEnvelope) -> FenceSubject {
        guard let body = try call.geoJSON else { return .savedPoints }
        guard let point = body.object else { throw GeoError.invalidBody("The body must be a point") }
        let id = point["objectId"]?.string
        let hasCoordinates =
            point["latitude"].map { $0 != .null } ?? false || point["longitude"].map { $0 != .null } ?? false
        return .position(id: id, coordinate: hasCoordinates ? try Coordinate(json: point) : nil)
    }

    private static func json(_ fence: GeoFence, id: String) -> JSONValue {
        guard case .object(var object) = fence.json else { return fence.json }
        object.members.insert(("objectId", .string(id)), at: 0)
        return .object(object)
    }

    /// 4000 unless the request carries the server-code key.
    private static func requireServerCode(_ call: PublicCall) throws(ErrorEnvelope) {
        guard call.identity.keyKind == .serverCode else {
            throw GeoError.serverCodeRequired("Managing geofences")
        }
    }
}
