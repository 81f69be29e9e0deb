import InternalProtocol

/// `permissions.rules` (data-service): an app's row-independent permissions — the global
/// matrix, table cells, owner policies and which operations object ACLs name — with the
/// catalog version they were read at, for the gateway's check before it routes.
public enum PermissionRulesLookup: RPCOperation {
    public static let name = "permissions.rules"
    public static let isIdempotent = true
    public static let callers: Set<ServiceName> = [.gateway]

    /// The app whose rules are wanted.
    public struct Request: Codable, Sendable, Equatable {
        /// The app id.
        public var appId: String

        /// Creates a request.
        public init(appId: String) {
            self.appId = appId
        }
    }

    /// The rules and their version.
    public struct Response: Codable, Sendable, Equatable {
        /// The app's catalog version the rules belong to (announced on `baas_catalog`).
        public var version: Int64
        /// The rules.
        public var rules: PermissionRules

        /// Creates a response.
        public init(version: Int64, rules: PermissionRules) {
            self.version = version
            self.rules = rules
        }
    }
}
