/// Who a request acts for: the app, the key kind it came with, the user (if a token was given)
/// and every role that applies. The gateway builds it; services trust it only from
/// authenticated peers.
package struct Identity: Codable, Sendable, Hashable {
    /// The app's id, an upper-case hyphenated UUID.
    package var appId: String
    /// The kind of API key the request carried.
    package var keyKind: APIKeyKind
    /// The logged-in user's objectId, or nil for an anonymous request.
    package var userId: String?
    /// All roles of the request: the key's role, the authentication role and custom roles.
    package var roles: [String]
    /// The stored id (token hash) of the user's session, so that users-service can end it
    /// without the token itself travelling further than the gateway.
    package var sessionId: String?
    /// Set only inside a process acting for itself (users-service writing `Users` rows through
    /// its embedded engine, an administrator's command): such work is not subject to the app's
    /// permissions, which an app may tighten so far that logins would otherwise fail. It is never
    /// encoded or decoded, so no header or body can claim it.
    package var isSystem = false

    private enum CodingKeys: String, CodingKey {
        case appId, keyKind, userId, roles, sessionId
    }

    /// Creates an identity.
    package init(appId: String, keyKind: APIKeyKind, userId: String? = nil, roles: [String]) {
        self.appId = appId
        self.keyKind = keyKind
        self.userId = userId
        self.roles = roles
    }

    /// An identity for a request without a user token: the key's role plus `NotAuthenticatedUser`.
    package static func anonymous(appId: String, keyKind: APIKeyKind) -> Identity {
        Identity(appId: appId, keyKind: keyKind, roles: [SystemRoles.notAuthenticated, keyKind.role])
    }
}
