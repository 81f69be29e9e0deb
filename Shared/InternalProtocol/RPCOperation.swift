/// One operation of the internal protocol: `POST /rpc/{name}` with a JSON `Request`, answered
/// with a JSON `Response` or an ``ErrorEnvelope``.
package protocol RPCOperation: Sendable {
    /// The request body type.
    associatedtype Request: Codable & Sendable
    /// The response body type.
    associatedtype Response: Codable & Sendable
    /// The operation's path segment, e.g. `system.status`.
    static var name: String { get }
    /// Whether a call may be retried once after a lost connection.
    static var isIdempotent: Bool { get }
    /// The services allowed to call the operation (by their certificates); any other caller is
    /// refused before the handler runs.
    static var callers: Set<ServiceName> { get }
}

/// A request or response without fields, encoded as `{}`.
package struct Empty: Codable, Sendable, Equatable {
    /// Creates the empty value.
    package init() {}
}

/// Header names of the internal protocol.
package enum InternalHeader {
    /// The request id, minted by the gateway (or taken from the client) and passed on by every hop.
    package static let requestID = "x-request-id"
    /// W3C trace context.
    package static let traceparent = "traceparent"
    /// The caller's remaining time budget in milliseconds when the call was sent.
    package static let deadline = "x-deadline-ms"
    /// The request's ``Identity`` as base64url JSON.
    package static let identity = "x-baas-identity"
    /// The public client's IP address as the gateway saw it, for per-address limits.
    package static let clientAddress = "x-client-address"
    /// On a passed-through public request: the path prefix the client addressed the app by
    /// (`/{appId}/{apiKey}` or `/api`), so a service can answer URLs the client can use.
    package static let publicPrefix = "x-baas-public-prefix"
    /// On a users-service answer: the id of a user whose sessions or roles just changed, so
    /// the gateway that forwarded the request drops its cached identities at once (other
    /// gateways hear of it through `LISTEN/NOTIFY`).
    package static let sessionsChanged = "x-baas-sessions-changed"
    /// On a passed-through request to files-service: the gateway reads the local file store
    /// itself, so a download may be answered by ``fileLocation`` instead of its bytes.
    package static let fileDirect = "x-baas-file-direct"
    /// On a files-service answer without a body: the stored object to send, relative to the
    /// file store's root (`{appId}/{ab}/{key}`), with ``fileRange``.
    package static let fileLocation = "x-baas-file-location"
    /// With ``fileLocation``: the bytes to send, `start-end` (end exclusive).
    package static let fileRange = "x-baas-file-range"
    /// On a request: the newest catalog version of its app the gateway knows committed, which the
    /// service's catalog must have reached before it answers; on an answer: the newest version
    /// the service used or made (``CatalogFreshness``).
    package static let catalogVersion = "x-baas-catalog-version"
}
