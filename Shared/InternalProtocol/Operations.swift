/// `system.status`: every service answers whether it is ready (its database reachable).
public enum SystemStatus: RPCOperation {
    public typealias Request = Empty
    public static let name = "system.status"
    public static let isIdempotent = true
    public static let callers: Set<ServiceName> = [.gateway]

    /// A service's readiness.
    public struct Response: Codable, Sendable, Equatable {
        /// The answering service.
        public var service: ServiceName
        /// True when the service can serve requests.
        public var ready: Bool
        /// What is wrong when not ready.
        public var detail: String?

        /// Creates a status.
        public init(service: ServiceName, ready: Bool, detail: String? = nil) {
            self.service = service
            self.ready = ready
            self.detail = detail
        }
    }
}

/// `apps.resolveKey` (users-service): turns an app id and an API key into the app's name and
/// the key's kind, or fails with 2002.
public enum ResolveAPIKey: RPCOperation {
    public static let name = "apps.resolveKey"
    public static let isIdempotent = true
    public static let callers: Set<ServiceName> = [.gateway]

    /// The pair to check.
    public struct Request: Codable, Sendable, Equatable {
        /// The app id from the URL or header.
        public var appId: String
        /// The API key from the URL or header.
        public var apiKey: String

        /// Creates a request.
        public init(appId: String, apiKey: String) {
            self.appId = appId
            self.apiKey = apiKey
        }
    }

    /// The resolved key.
    public struct Response: Codable, Sendable, Equatable {
        /// The app id in canonical form.
        public var appId: String
        /// The app's display name.
        public var appName: String
        /// The key's client kind.
        public var keyKind: APIKeyKind

        /// Creates a response.
        public init(appId: String, appName: String, keyKind: APIKeyKind) {
            self.appId = appId
            self.appName = appName
            self.keyKind = keyKind
        }
    }
}

/// `apps.get` (users-service): an app's name by id, for requests on the keyless `/api` path.
public enum GetApp: RPCOperation {
    public static let name = "apps.get"
    public static let isIdempotent = true
    public static let callers: Set<ServiceName> = [.gateway]

    /// The app to look up.
    public struct Request: Codable, Sendable, Equatable {
        /// The app id.
        public var appId: String
        /// Creates a request.
        public init(appId: String) { self.appId = appId }
    }

    /// The app.
    public struct Response: Codable, Sendable, Equatable {
        /// The app id in canonical form.
        public var appId: String
        /// The app's display name.
        public var name: String
        /// Creates a response.
        public init(appId: String, name: String) {
            self.appId = appId
            self.name = name
        }
    }
}

/// `users.resolveToken` (users-service): turns a `user-token` into the user it belongs to and
/// the user's custom roles, or fails with 3064 when no live session has it. Resolving a token
/// counts as activity for the session's inactivity timeout.
public enum ResolveUserToken: RPCOperation {
    public static let name = "users.resolveToken"
    public static let isIdempotent = true
    /// The gateway for requests; messaging-service for a real-time connection's new token.
    public static let callers: Set<ServiceName> = [.gateway, .messaging]

    /// The token to resolve.
    public struct Request: Codable, Sendable, Equatable {
        /// The app the request is for.
        public var appId: String
        /// The `user-token` header's value.
        public var token: String

        /// Creates a request.
        public init(appId: String, token: String) {
            self.appId = appId
            self.token = token
        }
    }

    /// The session's user.
    public struct Response: Codable, Sendable, Equatable {
        /// The user's objectId.
        public var userId: String
        /// The user's custom roles.
        public var roles: [String]
        /// The session's stored id (not usable as a token).
        public var sessionId: String
        /// True for a guest's session (`POST /users/register/guest`); absent otherwise.
        public var guest: Bool?

        /// Creates a response.
        public init(userId: String, roles: [String], sessionId: String, guest: Bool? = nil) {
            self.userId = userId
            self.roles = roles
            self.sessionId = sessionId
            self.guest = guest
        }
    }
}

/// `users.resolveSession` (users-service): the user and roles of the session stored as
/// `sessionId` (a token's hash, which an ``Identity`` carries), or 3064 when it is no longer
/// live — how a real-time connection learns, after an announcement on ``SessionsChannel``, what
/// its user may still do. Counts as activity, as a resolved token does.
public enum ResolveSession: RPCOperation {
    public static let name = "users.resolveSession"
    public static let isIdempotent = true
    /// messaging-service, for its real-time connections.
    public static let callers: Set<ServiceName> = [.messaging]

    /// The session to look up.
    public struct Request: Codable, Sendable, Equatable {
        /// The app the session is of.
        public var appId: String
        /// The session's stored id.
        public var sessionId: String

        /// Creates a request.
        public init(appId: String, sessionId: String) {
            self.appId = appId
            self.sessionId = sessionId
        }
    }

    /// The session's user, as a token resolves to it.
    public typealias Response = ResolveUserToken.Response
}

/// `users.save` (users-service): a save to the `Users` table through the data API that carries a
/// `password` — data-service hands it over, since only users-service keeps credentials. Without
/// an `objectId` it registers the user (as `POST /users/register` does); with one it updates
/// the profile and re-hashes the password (as `PUT /users/{id}` does). Acts for the call's
/// identity. Not idempotent.
public enum SaveUser: RPCOperation {
    public static let name = "users.save"
    public static let isIdempotent = false
    public static let callers: Set<ServiceName> = [.data]

    /// The save.
    public struct Request: Codable, Sendable, Equatable {
        /// The user to update, or nil to create one.
        public var objectId: String?
        /// The object as the client sent it, as JSON text.
        public var object: String

        /// Creates a request.
        public init(objectId: String?, object: String) {
            self.objectId = objectId
            self.object = object
        }
    }

    /// The saved user.
    public struct Response: Codable, Sendable, Equatable {
        /// The user as saved, as JSON text (never with its password).
        public var user: String
        /// Whether the user's sessions were ended (a new password).
        public var endedSessions: Bool

        /// Creates a response.
        public init(user: String, endedSessions: Bool) {
            self.user = user
            self.endedSessions = endedSessions
        }
    }
}

extension ResolveUserToken {
    /// `token` when it names one: nil for none, empty, or the `null` / `undefined` that JS
    /// clients send when logged out.
    public static func presented(_ token: String?) -> String? {
        guard let token, !token.isEmpty, token != "null", token != "undefined" else { return nil }
        return token
    }
}

extension Identity {
    /// This identity as the user of `session`: `AuthenticatedUser` (and `GuestUser` for a guest)
    /// and the key's role instead of `NotAuthenticatedUser`, plus the user's custom roles.
    public func authenticated(as session: ResolveUserToken.Response) -> Identity {
        let guest = session.guest == true ? [SystemRoles.guest] : []
        var authenticated = Identity(
            appId: appId, keyKind: keyKind, userId: session.userId,
            roles: [SystemRoles.authenticated] + guest + [keyKind.role] + session.roles)
        authenticated.sessionId = session.sessionId
        return authenticated
    }
}
