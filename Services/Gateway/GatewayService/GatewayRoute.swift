import InternalProtocol

/// The routes the gateway answers itself, under the app prefix like every service's.
enum GatewayRoute: String, CaseIterable, Sendable {
    case info
    case realTimeLookup = "rt/lookup"
    case openAPI = "openapi.json"

    /// What each does, for `openapi.json`.
    var doc: RouteDoc {
        switch self {
        case .info:
            RouteDoc(
                "Names the app, the caller's key kind and roles, and every service's readiness", json: .ref("AppInfo"))
        case .realTimeLookup:
            RouteDoc("Names the URL real-time (socket.io) clients connect to", json: .string)
        case .openAPI:
            RouteDoc("Describes this API as an OpenAPI 3.1 document", json: .anyObject)
        }
    }

    /// The schemas the gateway's routes refer to.
    static let schemas: [String: APISchema] = [
        "AppInfo": .object(
            [
                "appId": .string, "name": .string, "keyKind": .choice(APIKeyKind.allCases.map(\.rawValue)),
                "roles": .array(.string), "ready": .boolean, "rtURL": .string,
                "services": .array(
                    .object(["name": .string, "ready": .boolean, "detail": .string], required: ["name", "ready"])),
            ], required: ["appId", "name", "keyKind", "roles", "ready", "services", "rtURL"])
    ]
}
