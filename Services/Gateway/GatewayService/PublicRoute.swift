import InternalProtocol

/// Where a public request goes, decided from its path alone.
public struct PublicRoute: Equatable, Sendable {
    /// How the request names its app and key.
    public enum Credentials: Equatable, Sendable {
        /// `/{appId}/{apiKey}/…`; the key is nil when the path has no second segment.
        case path(appID: String, apiKey: String?)
        /// `/api/…`: app and key come from headers or configuration.
        case headers
        /// `/{appId}/account/…`: the pages emailed links open, which carry no key and act as an
        /// anonymous REST client.
        case appOnly(appID: String)
    }

    /// The request's credentials.
    public var credentials: Credentials
    /// The path after the app prefix, e.g. `data/Person/123`, without a leading slash.
    public var resource: [Substring]

    /// Splits a request path into credentials and resource; nil for `/` and `/api` themselves.
    public init?(path: String) {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard let first = segments.first, !first.isEmpty else { return nil }
        if first == "api" {
            credentials = .headers
            resource = Array(segments.dropFirst())
        } else if segments.dropFirst().first == "account" {
            credentials = .appOnly(appID: String(first))
            resource = Array(segments.dropFirst())
        } else {
            let key = segments.dropFirst().first.flatMap { $0.isEmpty ? nil : String($0) }
            credentials = .path(appID: String(first), apiKey: key)
            resource = Array(segments.dropFirst(2))
        }
        if resource.last?.isEmpty == true { resource.removeLast() }
        if resource.isEmpty && credentials == .headers { return nil }
    }

    /// The resource as one string, e.g. `data/Person`.
    public var resourcePath: String { resource.joined(separator: "/") }

    /// The target of the resource: the gateway itself for `info`, else the owning backend;
    /// nil when no service owns the path.
    public var target: Target? {
        guard let head = resource.first else { return nil }
        switch head {
        case "info" where resource.count == 1: return .gatewayInfo
        case "users": return .backend(.users)
        case "account" where resource.count >= 2: return .backend(.users)
        case "data": return .backend(isRelationPath ? .relations : .data)
        case "transaction": return .backend(.data)
        case "messaging", "emailtemplate": return .backend(.messaging)
        case "files": return .backend(.files)
        case "geo": return .backend(.geo)
        default: return nil
        }
    }

    /// Where a route leads.
    public enum Target: Equatable, Sendable {
        /// `GET …/info`, answered by the gateway.
        case gatewayInfo
        /// A backend service.
        case backend(ServiceName)
    }

    // `data/{table}/{id}/{relation}[/load]` is the relations service's; `data/bulk/…`,
    // `data/bulkupsert/…`, `data/data-grouping/…`, `data/{table}/permissions/…` and
    // `data/{table}/properties/…` (schema management) stay with data.
    private var isRelationPath: Bool {
        guard resource.count >= 4 else { return false }
        return !["bulk", "bulkupsert", "data-grouping"].contains(resource[1])
            && !["permissions", "properties"].contains(resource[2])
    }
}
