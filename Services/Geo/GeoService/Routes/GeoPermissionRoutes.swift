import DataEngine
import Hummingbird
import InternalProtocol
import Permissions
import ServiceRuntime

/// Category permissions, with the server-code key: `PUT geo/categories/{name}/permissions/{GRANT|DENY|INHERIT}`
/// with `{"permission": "FIND"|"ADD"|"REMOVE", "user": "<id>|*"}` or `{…, "role": "<name>|*"}`
/// (neither: every role), `PUT geo/categories/{name}/permissions/owner/{…}` with `{"permission"}`
/// (the owner policy), and `GET geo/categories/{name}/permissions` reading them back. Category
/// `*` is the global matrix every category inherits.
struct GeoPermissionRoutes: Sendable {
    let store: GeoStore
    /// Told of each change at once; other instances hear of it by notification.
    let rules: CategoryRulesCache

    func add(to routes: inout PublicRoutes) {
        routes.add(.get, "geo/categories/:name/permissions", options: GeoRoutes.options) { call in
            let category = try Self.category(call)
            return .geo(try await store.categoryRuleList(app: call.identity.appId, category: category))
        }
        routes.add(.put, "geo/categories/:name/permissions/owner/:action", options: GeoRoutes.options) { call in
            try await change(call, principal: .owner)
        }
        routes.add(.put, "geo/categories/:name/permissions/:action", options: GeoRoutes.options) { call in
            try await change(call, principal: nil)
        }
    }

    /// Sets or clears one cell; `principal` nil reads it from the body.
    private func change(_ call: PublicCall, principal: CategoryPrincipal?) async throws -> Response {
        let category = try Self.category(call)
        let action = call.parameter("action").uppercased()
        guard action == "INHERIT" || PermissionDecision(rawValue: action) != nil else {
            throw GeoError.invalidBody("The permission action must be GRANT, DENY or INHERIT, not '\(action)'")
        }
        guard case .object(let body)? = try call.geoJSON else { throw GeoError.invalidBody("The body must be a JSON object") }
        guard let name = body["permission"]?.string, let operation = GeoOperation(rawValue: name.uppercased()) else {
            throw GeoError.invalidBody("'permission' must be FIND, ADD or REMOVE")
        }
        let principal = principal ?? Self.principal(body)
        // The global layers of the model are per role only (as data's global matrix is).
        if category == "*" {
            guard case .principal(.role) = principal else {
                throw GeoError.invalidBody("The global matrix (category '*') names roles, not users or the owner")
            }
        }
        try await store.setCategoryRule(
            app: call.identity.appId, category: category, principal: principal, operation: operation,
            decision: PermissionDecision(rawValue: action))
        await rules.invalidate(call.identity.appId)
        return .geo(.null)
    }

    /// The body's user or role; neither names every role.
    private static func principal(_ body: JSONObject) -> CategoryPrincipal {
        if let user = body["user"]?.string, !user.isEmpty { return .principal(.user(user)) }
        if let role = body["role"]?.string, !role.isEmpty { return .principal(.role(role)) }
        return .principal(.role(Principal.everyone))
    }

    /// The `:name` category (`*` for the global matrix); 4000 without the server-code key.
    private static func category(_ call: PublicCall) throws(ErrorEnvelope) -> String {
        guard call.identity.keyKind == .serverCode else {
            throw GeoError.serverCodeRequired("Changing category permissions")
        }
        let name = call.parameter("name")
        return name == "*" ? name : try GeoCategoryName.normalized(name)
    }
}
