import InternalProtocol

/// `permissions.rules` (data-service): an app's row-independent permissions — the global
/// matrix, table cells, owner policies and which operations object ACLs name — with the
/// catalog version they were read at, for the gateway's check before it routes.
package enum PermissionRulesLookup: RPCOperation {
    package static let name = "permissions.rules"
    package static let isIdempotent = true
    package static let callers: Set<ServiceName> = [.gateway]

    /// The app whose rules are wanted.
    package struct Request: Codable, Sendable, Equatable {
        /// The app id.
        package var appId: String

        /// Creates a request.
        package init(appId: String) {
            self.appId = appId
        }
    }

    /// The rules and their version.
    package struct Response: Codable, Sendable, Equatable {
        /// The app's catalog version the rules belong to (announced on `baas_catalog`).
        package var version: Int64
        /// The rules.
        package var rules: PermissionRules

        /// Creates a response.
        package init(version: Int64, rules: PermissionRules) {
            self.version = version
            self.rules = rules
        }
    }
}
