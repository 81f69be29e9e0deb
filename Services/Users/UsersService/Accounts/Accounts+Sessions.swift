import DataEngine
import Foundation
import InternalProtocol
import Logging

extension Accounts {
    /// The user a token belongs to (counting as activity), or 3064.
    package func resolve(appID: String, token: String, logger: Logger) async throws -> ResolveUserToken.Response {
        guard let live = try await Sessions.resolve(appID: appID, token: token, now: now(), session: pool(logger))
        else {
            throw ErrorEnvelope.invalidUserToken
        }
        return ResolveUserToken.Response(live)
    }

    /// The user of the session stored as `sessionID` (counting as activity), or 3064.
    package func resolve(appID: String, sessionID: String, logger: Logger) async throws -> ResolveSession.Response {
        guard
            let live = try await Sessions.resolve(appID: appID, sessionID: sessionID, now: now(), session: pool(logger))
        else {
            throw ErrorEnvelope.invalidUserToken
        }
        return ResolveSession.Response(live)
    }

    /// `GET /users/isvalidusertoken/{token}`: whether the token names a live session (a
    /// database failure stays an error, never a "false").
    package func isValid(appID: String, token: String, logger: Logger) async throws -> Bool {
        try await Sessions.resolve(appID: appID, token: token, now: now(), session: pool(logger)) != nil
    }

    /// `GET /users/logout`: ends the caller's session at once (3064 when it is not live).
    package func logout(_ identity: Identity, logger: Logger) async throws {
        guard let sessionID = identity.sessionId else { throw UserError.notLoggedIn }
        guard try await Sessions.end(appID: identity.appId, sessionID: sessionID, session: pool(logger)) else {
            throw ErrorEnvelope.invalidUserToken
        }
    }
}

extension ResolveUserToken.Response {
    init(_ live: Sessions.Live) {
        self.init(userId: live.userID, roles: live.roles, sessionId: live.sessionID, guest: live.guest ? true : nil)
    }
}
