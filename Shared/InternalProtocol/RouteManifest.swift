/// What the gateway needs to know about one service's public routes: it routes requests, checks
/// bodies and applies the row-independent permission layers from these, never from a copy of
/// its own. Each service builds its manifest from the same declarations that register its
/// handlers, and answers it on ``SystemRoutes``.
package struct RouteManifest: Codable, Sendable, Equatable {
    /// The service serving the routes.
    package var service: ServiceName
    /// Its public routes.
    package var routes: [RouteDescriptor]
    /// The schemas its routes' descriptions refer to by name (`APISchema.ref`).
    package var schemas: [String: APISchema]

    /// Creates a manifest.
    package init(service: ServiceName, routes: [RouteDescriptor], schemas: [String: APISchema] = [:]) {
        self.service = service
        self.routes = routes
        self.schemas = schemas
    }
}

/// One public route: method, path pattern, the permission it performs, its limits and how its
/// bodies travel.
package struct RouteDescriptor: Codable, Sendable, Hashable {
    /// How the bodies of a route travel.
    package enum Transfer: String, Codable, Sendable {
        /// Small bodies (JSON), read whole by the handler within a deadline.
        case buffered
        /// Bodies streamed both ways with backpressure, bounded by an idle timeout rather than a
        /// whole-transfer deadline (uploads, downloads).
        case streamed
        /// A long-lived bidirectional stream: a public WebSocket relayed over one internal stream.
        case bidirectional
    }

    /// The HTTP method, e.g. `GET`.
    package var method: String
    /// The path after the app prefix in Hummingbird's syntax, without a leading slash:
    /// `data/:table/:id`, `files/**`.
    package var path: String
    /// The row-independent permission check the gateway applies, if any.
    package var permission: RoutePermission?
    /// The largest request body in bytes.
    package var bodyLimit: Int
    /// How bodies travel.
    package var transfer: Transfer
    /// For streamed and bidirectional routes: how long a transfer may stay silent, in milliseconds.
    package var idleTimeoutMilliseconds: Int?
    /// Whether the route is also served without an API key, as the app's anonymous REST client
    /// (`/{appId}/…`: the pages emailed links open).
    package var keyless: Bool
    /// Whether a successful call changes the app's permission rules (the gateway drops its cache).
    package var changesPermissions: Bool
    /// Whether the route is also served at `/{appId}/`, with the API key and the user token in
    /// the query (`apiKey`, `userToken`): where socket.io clients of the real-time protocol connect.
    package var atAppRoot: Bool
    /// What the route does, for `openapi.json`.
    package var doc: RouteDoc?

    /// Creates a descriptor.
    package init(
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
/// gateway's rule check needs it: `Find` on the table `:table`, under the data tables' rules.
package struct RoutePermission: Codable, Sendable, Hashable {
    /// The operation's name in the permission model (`Find`, `Create`, …).
    package var operation: String
    /// The path parameter naming the container (a table for data routes).
    package var containerParameter: String
    /// Whose rules decide it; the gateway refuses early only under rules it keeps (nil: none,
    /// the owning service decides alone).
    package var rules: Rules?

    /// The rule sets a route's permission can be decided by.
    package enum Rules: String, Codable, Sendable, Hashable {
        /// The app's table and global rules of the data catalog (data-service's
        /// `permissions.rules`), versioned with the catalog.
        case dataTables
    }

    /// Creates a permission.
    package init(operation: String, containerParameter: String, rules: Rules? = nil) {
        self.operation = operation
        self.containerParameter = containerParameter
        self.rules = rules
    }
}

/// `system.routes` (every backend): the service's ``RouteManifest``.
package enum SystemRoutes: RPCOperation {
    package typealias Request = Empty
    package typealias Response = RouteManifest
    package static let name = "system.routes"
    package static let isIdempotent = true
    package static let callers: Set<ServiceName> = [.gateway]
}
