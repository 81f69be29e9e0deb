/// What the gateway needs to know about one service's public routes: it routes requests, checks
/// bodies and applies the row-independent permission layers from these, never from a copy of
/// its own. Each service builds its manifest from the same declarations that register its
/// handlers, and answers it on ``SystemRoutes``.
public struct RouteManifest: Codable, Sendable, Equatable {
    /// The service serving the routes.
    public var service: ServiceName
    /// Its public routes.
    public var routes: [RouteDescriptor]
    /// The schemas its routes' descriptions refer to by name (`APISchema.ref`).
    public var schemas: [String: APISchema]

    /// Creates a manifest.
    public init(service: ServiceName, routes: [RouteDescriptor], schemas: [String: APISchema] = [:]) {
        self.service = service
        self.routes = routes
        self.schemas = schemas
    }
}

/// One public route: method, path pattern, the permission it performs, its limits and how its
/// bodies travel.
public struct RouteDescriptor: Codable, Sendable, Hashable {
    /// How the bodies of a route travel.
    public enum Transfer: String, Codable, Sendable {
        /// Small bodies (JSON), read whole by the handler within a deadline.
        case buffered
        /// Bodies streamed both ways with backpressure, bounded by an idle timeout rather than a
        /// whole-transfer deadline (uploads, downloads).
        case streamed
        /// A long-lived bidirectional stream: a public WebSocket relayed over one internal stream.
        case bidirectional
    }

    /// The HTTP method, e.g. `GET`.
    public var method: String
    /// The path after the app prefix in Hummingbird's syntax, without a leading slash:
    /// `data/:table/:id`, `files/**`.
    public var path: String
    /// The row-independent permission check the gateway applies, if any.
    public var permission: RoutePermission?
    /// The largest request body in bytes.
    public var bodyLimit: Int
    /// How bodies travel.
    public var transfer: Transfer
    /// For streamed and bidirectional routes: how long a transfer may stay silent, in milliseconds.
    public var idleTimeoutMilliseconds: Int?
    /// Whether the route is also served without an API key, as the app's anonymous REST client
    /// (`/{appId}/…`: the pages emailed links open).
    public var keyless: Bool
    /// Whether a successful call changes the app's permission rules (the gateway drops its cache).
    public var changesPermissions: Bool
    /// Whether the route is also served at `/{appId}/`, with the API key and the user token in
    /// the query (`apiKey`, `userToken`): where socket.io clients of the real-time protocol connect.
    public var atAppRoot: Bool
    /// What the route does, for `openapi.json`.
    public var doc: RouteDoc?

    /// Creates a descriptor.
    public init(
        method: String, path: String, permission: RoutePermission? = nil, bodyLimit: Int,
        transfer: Transfer = .buffered, idleTimeoutMilliseconds: Int? = nil, keyless: Bool = false,
        changesPermissions: Bool = false, atAppRoot: Bool = false, doc: RouteDoc? = nil
    ) {
        self.method = method
        self.path = path
        self.permission = permission
        self.bodyLimit = bodyLimit
        self.transfer = transfer
        self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        self.keyless = keyless
        self.changesPermissions = changesPermissions
        self.atAppRoot = atAppRoot
        self.doc = doc
    }
}

/// The permission a route performs on a container named by one of its path parameters, as the
/// gateway's rule check needs it: `Find` on the table `:table`.
public struct RoutePermission: Codable, Sendable, Hashable {
    /// The operation's name in the permission model (`Find`, `Create`, …).
    public var operation: String
    /// The path parameter naming the container (a table for data routes).
    public var containerParameter: String

    /// Creates a permission.
    public init(operation: String, containerParameter: String) {
        self.operation = operation
        self.containerParameter = containerParameter
    }
}

/// `system.routes` (every backend): the service's ``RouteManifest``.
public enum SystemRoutes: RPCOperation {
    public typealias Request = Empty
    public typealias Response = RouteManifest
    public static let name = "system.routes"
    public static let isIdempotent = true
    public static let callers: Set<ServiceName> = [.gateway]
}
