import DataEngine
import Hummingbird
import InternalProtocol
import Permissions
import ServiceRuntime

/// A container kind's permission API, with the server-code key: `PUT {path}/{name}/permissions/{GRANT|DENY|INHERIT}`
/// with `{"permission": "<operation>", "user": "<id>|*"}` or `{…, "role": "<name>|*"}` (neither:
/// every role), `PUT {path}/{name}/permissions/owner/{…}` with `{"permission"}` (the owner policy,
/// where the kind has owned assets), and `GET {path}/{name}/permissions` reading them back.
/// Container `*` is the global matrix every container inherits, and names roles only (as data's
/// global matrix does).
package struct ContainerPermissionRoutes<Operation: PermissionOperation & CaseIterable>: Sendable {
    /// How a service refuses what these routes are sent.
    package struct Refusals: Sendable {
        /// A body, action or permission that is not what the API describes (400).
        package let invalidBody: @Sendable (String) -> ErrorEnvelope
        /// A call without the server-code key (403).
        package let serverCodeRequired: ErrorEnvelope

        package init(invalidBody: @escaping @Sendable (String) -> ErrorEnvelope, serverCodeRequired: ErrorEnvelope) {
            self.invalidBody = invalidBody
            self.serverCodeRequired = serverCodeRequired
        }
    }

    /// The containers' path, such as `geo/categories`, with its `:parameter` appended.
    let path: String
    let parameter: String
    let options: RouteOptions
    let table: ContainerRuleTable<Operation>
    /// The container name as stored (validated); `*` is passed through untouched.
    let containerName: @Sendable (String) throws(ErrorEnvelope) -> String
    /// Told of each change at once; other instances hear of it by notification.
    let changed: @Sendable (String) async -> Void
    let refusals: Refusals
    /// Whether the containers hold owned assets, so an owner policy means something.
    let ownerPolicy: Bool

    /// The routes under `{path}/:{parameter}/permissions`.
    package init(
        path: String, parameter: String, options: RouteOptions, table: ContainerRuleTable<Operation>, ownerPolicy: Bool,
        refusals: Refusals, containerName: @escaping @Sendable (String) throws(ErrorEnvelope) -> String,
        changed: @escaping @Sendable (String) async -> Void
    ) {
        self.path = path
        self.parameter = parameter
        self.options = options
        self.table = table
        self.ownerPolicy = ownerPolicy
        self.refusals = refusals
        self.containerName = containerName
        self.changed = changed
    }

    package func add(to routes: inout PublicRoutes) {
        let base = "\(path)/:\(parameter)/permissions"
        routes.publish(PermissionSchemas.all)
        routes.add(.get, base, options: options, doc: .containerPermissions) { call in
            .json(try await table.list(app: call.identity.appId, container: try container(call)))
        }
        if ownerPolicy {
            routes.add(
                .put, "\(base)/owner/:action", options: options, doc: .setContainerOwnerPolicy(Operation.self)
            ) { call in
                try await change(call, principal: .owner)
            }
        }
        routes.add(.put, "\(base)/:action", options: options, doc: .setContainerPermission(Operation.self)) { call in
            try await change(call, principal: nil)
        }
    }

    /// Sets or clears one cell; `principal` nil reads it from the body.
    private func change(_ call: PublicCall, principal: ContainerPrincipal?) async throws -> Response {
        let container = try container(call)
        let action = call.parameter("action").uppercased()
        guard action == "INHERIT" || PermissionDecision(rawValue: action) != nil else {
            throw refusals.invalidBody(
                "The permission action must be GRANT, DENY or INHERIT, not '\(action.prefix(32))'")
        }
        guard case .object(let body)? = try call.json(maximumDepth: 4, refusal: refusals.invalidBody) else {
            throw refusals.invalidBody("The body must be a JSON object")
        }
        guard let name = body["permission"]?.string, let operation = Operation(rawValue: name.uppercased()) else {
            let names = Operation.allCases.map(\.rawValue).joined(separator: ", ")
            throw refusals.invalidBody("'permission' must be one of \(names)")
        }
        let principal = try principal ?? self.principal(body)
        if container == "*" {
            guard case .principal(.role) = principal else {
                throw refusals.invalidBody("The global matrix ('*') names roles, not users or the owner")
            }
        }
        try await table.set(
            app: call.identity.appId, container: container, principal: principal, operation: operation,
            decision: PermissionDecision(rawValue: action))
        await changed(call.identity.appId)
        return .json(.null)
    }

    /// The body's user or role (a non-empty string, not both); neither names every role.
    private func principal(_ body: JSONObject) throws(ErrorEnvelope) -> ContainerPrincipal {
        switch (body["user"], body["role"]) {
        case (nil, nil): return .principal(.role(Principal.everyone))
        case (.string(let user)?, nil) where !user.isEmpty && user.utf8.count <= 255: return .principal(.user(user))
        case (nil, .string(let role)?) where !role.isEmpty && role.utf8.count <= 255: return .principal(.role(role))
        default: throw refusals.invalidBody("Name one 'user' or one 'role': a non-empty string of at most 255 bytes")
        }
    }

    /// The container the path names (`*` for the global matrix); refused without the server-code key.
    private func container(_ call: PublicCall) throws(ErrorEnvelope) -> String {
        guard call.identity.keyKind == .serverCode else { throw refusals.serverCodeRequired }
        let name = call.parameter(parameter)
        return name == "*" ? name : try containerName(name)
    }
}

extension RouteDoc {
    /// `GET {path}/{name}/permissions`: a container's cells (`*`: the global matrix).
    static let containerPermissions = RouteDoc(
        "Lists a container's permission cells and owner policy; * names the global matrix",
        json: .ref("PermissionRules"))

    /// `PUT {path}/{name}/permissions/owner/{action}`: one cell of a container's owner policy.
    static func setContainerOwnerPolicy<Operation: PermissionOperation & CaseIterable>(_: Operation.Type) -> RouteDoc {
        RouteDoc(
            "Grants, denies or clears (INHERIT) one operation for the owners of a container's assets",
            body: .json(.object(["permission": permissionName(Operation.self)], required: ["permission"])),
            json: APISchema(types: ["null"]))
    }

    /// `PUT {path}/{name}/permissions/{action}`: one cell of a container's permissions.
    static func setContainerPermission<Operation: PermissionOperation & CaseIterable>(_: Operation.Type) -> RouteDoc {
        RouteDoc(
            "Grants, denies or clears (INHERIT) one operation on a container for a user or a role",
            body: .json(
                .object(
                    [
                        "permission": permissionName(Operation.self),
                        "user": principalName.described("A user's id, or * for every user; not with role"),
                        "role": principalName.described(
                            "A role's name, or * for every role; neither user nor role means every role"),
                    ], required: ["permission"])),
            json: APISchema(types: ["null"]))
    }

    /// The operation a permission change names: one of the container kind's, in any case.
    private static func permissionName<Operation: PermissionOperation & CaseIterable>(_: Operation.Type) -> APISchema {
        APISchema.choice(Operation.allCases.map(\.rawValue)).described("The operation, in any case")
    }

    /// A user or role a cell names: a non-empty string of at most 255 bytes (JSON Schema counts
    /// characters: 255 of them fit when they are ASCII).
    private static let principalName = APISchema.string.length(1, 255)
}
