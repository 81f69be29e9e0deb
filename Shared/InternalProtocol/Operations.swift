/// `system.status`: every service answers whether it is ready (its database reachable).
package enum SystemStatus: RPCOperation {
    package typealias Request = Empty
    package static let name = "system.status"
    package static let isIdempotent = true
    package static let callers: Set<ServiceName> = [.gateway]

    /// A service's readiness.
    package struct Response: Codable, Sendable, Equatable {
        /// The answering service.
        package var service: ServiceName
        /// True when the service can serve requests.
        package var ready: Bool
        /// What is wrong when not ready.
        package var detail: String?

        /// Creates a status.
        package init(service: ServiceName, ready: Bool, detail: String? = nil) {
            self.service = service
            self.ready = ready
            self.detail = detail
        }
    }
}

/// `apps.resolveKey` (users-service): turns an app id and an API key into the app's name and
/// the key's kind, or fails with 2002.
package enum ResolveAPIKey: RPCOperation {
    package static let name = "apps.resolveKey"
    package static let isIdempotent = true
    package static let callers: Set<ServiceName> = [.gateway]

    /// The pair to check.
    package struct Request: Codable, Sendable, Equatable {
        /// The app id from the URL or header.
        package var appId: String
        /// The API key from the URL or header.
        package var apiKey: String

        /// Creates a request.
        package init(appId: String, apiKey: String) {
            self.appId = appId
            self.apiKey = apiKey
        }
    }

    /// The resolved key.
    package struct Response: Codable, Sendable, Equatable {
        /// The app id in canonical form.
        package var appId: String
        /// The app's display name.
        package var appName: String
        /// The key's client kind.
        package var keyKind: APIKeyKind

        /// Creates a response.
        package init(appId: String, appName: String, keyKind: APIKeyKind) {
            self.appId = appId
            self.appName = appName
            self.keyKind = keyKind
        }
    }
}

/// `apps.get` (users-service): an app's name by id, for requests on the keyless `/api` path.
package enum GetApp: RPCOperation {
    package static let name = "apps.get"
    package static let isIdempotent = true
    package static let callers: Set<ServiceName> = [.gateway]

    /// The app to look up.
    package struct Request: Codable, Sendable, Equatable {
        /// The app id.
        package var appId: String
        /// Creates a request.
        package init(appId: String) { self.appId = appId }
    }

    /// The app.
    package struct Response: Codable, Sendable, Equatable {
        /// The app id in canonical form.
        package var appId: String
        /// The app's display name.
        package var name: String
        /// Creates a response.
        package init(appId: String, name: String) {
            self.appId = appId
            self.name = name
        }
    }
}

/// `users.resolveToken` (users-service): turns a `user-token` into the user it belongs to and
/// the user's custom roles, or fails with 3064 when no live session has it. Resolving a token
/// counts as activity for the session's inactivity timeout.
package enum ResolveUserToken: RPCOperation {
    package static let name = "users.resolveToken"
    package static let isIdempotent = true
    /// The gateway for requests; messaging-service for a real-time connection's new token.
    package static let callers: Set<ServiceName> = [.gateway, .messaging]

    /// The token to resolve.
    package struct Request: Codable, Sendable, Equatable {
        /// The app the request is for.
        package var appId: String
        /// The `user-token` header's value.
        package var token: String

        /// Creates a request.
        package init(appId: String, token: String) {
            self.appId = appId
            self.token = token
        }
    }

    /// The session's user.
    package struct Response: Codable, Sendable, Equatable {
        /// The user's objectId.
        package var userId: String
        /// The user's custom roles.
        package var roles: [String]
        /// The session's stored id (not usable as a token).
        package var sessionId: String
        /// True for a guest's session (`POST /users/register/guest`); absent otherwise.
        package var guest: Bool?

        /// Creates a response.
        package init(userId: String, roles: [String], sessionId: String, guest: Bool? = nil) {
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
package enum ResolveSession: RPCOperation {
    package static let name = "users.resolveSession"
    package static let isIdempotent = true
    /// messaging-service, for its real-time connections.
    package static let callers: Set<ServiceName> = [.messaging]

    /// The session to look up.
    package struct Request: Codable, Sendable, Equatable {
        /// The app the session is of.
        package var appId: String
        /// The session's stored id.
        package var sessionId: String

        /// Creates a request.
        package init(appId: String, sessionId: String) {
            self.appId = appId
            self.sessionId = sessionId
        }
    }

    /// The session's user, as a token resolves to it.
    package typealias Response = ResolveUserToken.Response
}

/// `users.registerMany` (users-service): a bulk create of `Users` through the data API whose
/// objects carry passwords — each registered as `POST /users/register` would, all in one
/// transaction. Not idempotent.
package enum RegisterUsers: RPCOperation {
    package static let name = "users.registerMany"
    package static let isIdempotent = false
    package static let callers: Set<ServiceName> = [.data]

    /// The objects as the client sent them, each as JSON text.
    package struct Request: Codable, Sendable, Equatable {
        package var objects: [String]

        /// Creates a request.
        package init(objects: [String]) {
            self.objects = objects
        }
    }

    /// The new users' ids, in request order.
    package struct Response: Codable, Sendable, Equatable {
        package var ids: [String]

        /// Creates a response.
        package init(ids: [String]) {
            self.ids = ids
        }
    }
}

/// `users.save` (users-service): a save to the `Users` table through the data API that carries a
/// `password` — data-service hands it over, since only users-service keeps credentials. Without
/// an `objectId` it registers the user (as `POST /users/register` does); with one it updates
/// the profile and re-hashes the password (as `PUT /users/{id}` does). Acts for the call's
/// identity. Not idempotent.
package enum SaveUser: RPCOperation {
    package static let name = "users.save"
    package static let isIdempotent = false
    package static let callers: Set<ServiceName> = [.data]

    /// The save.
    package struct Request: Codable, Sendable, Equatable {
        /// The user to update, or nil to create one.
        package var objectId: String?
        /// The object as the client sent it, as JSON text.
        package var object: String

        /// Creates a request.
        package init(objectId: String?, object: String) {
            self.objectId = objectId
            self.object = object
        }
    }

    /// The saved user.
    package struct Response: Codable, Sendable, Equatable {
        /// The user as saved, as JSON text (never with its password).
        package var user: String
        /// Whether the user's sessions were ended (a new password).
        package var endedSessions: Bool

        /// Creates a response.
        package init(user: String, endedSessions: Bool) {
            self.user = user
            self.endedSessions = endedSessions
        }
    }
}

extension ResolveUserToken {
    /// `token` when it names one: nil for none, empty, or the `null` / `undefined` that JS
    /// clients send when logged out.
    package static func presented(_ token: String?) -> String? {
        guard let token, !token.isEmpty, token != "null", token != "undefined" else { return nil }
        return token
    }
}

extension Identity {
    /// This identity as the user of `session`: `AuthenticatedUser` (and `GuestUser` for a guest)
    /// and the key's role instead of `NotAuthenticatedUser`, plus the user's custom roles.
    package func authenticated(as session: ResolveUserToken.Response) -> Identity {
        let guest = session.guest == true ? [SystemRoles.guest] : []
        var authenticated = Identity(
            appId: appId, keyKind: keyKind, userId: session.userId,
            roles: [SystemRoles.authenticated] + guest + [keyKind.role] + session.roles)
        authenticated.sessionId = session.sessionId
        return authenticated
    }
}
