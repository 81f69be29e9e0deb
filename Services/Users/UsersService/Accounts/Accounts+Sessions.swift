import DataEngine
import Foundation
import InternalProtocol
import Logging
import ServiceRuntime

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

    /// `GET /users/logout`: ends the caller's session at once (3064 when it is not live, 3023
    /// when the session store fails, so that the JS SDK forgets its user all the same). The
    /// session belongs to the path's app: the gateway resolved the token within that app.
    package func logout(_ identity: Identity, logger: Logger) async throws {
        guard let sessionID = identity.sessionId else { throw UserError.notLoggedIn }
        let ended: Bool
        do {
            ended = try await Sessions.end(appID: identity.appId, sessionID: sessionID, session: pool(logger))
        } catch {
            throw Self.logoutFailure(error, logger: logger)
        }
        guard ended else { throw ErrorEnvelope.invalidUserToken }
    }

    /// 3023 for a logout the session store could not carry out, with the status and the words
    /// of the envelope `error` maps to (a database out of reach is 503); anything else is logged
    /// and answered 500 without details, as every unexpected error is.
    private static func logoutFailure(_ error: any Error, logger: Logger) -> ErrorEnvelope {
        if let envelope = ErrorEnvelope.from(error) {
            return UserError.logoutFailed(envelope.message, status: envelope.status)
        }
        logger.error("logout failed", metadata: ["error": "\(String(reflecting: error))"])
        return UserError.logoutFailed("The session could not be ended", status: 500)
    }
}

extension ResolveUserToken.Response {
    init(_ live: Sessions.Live) {
        self.init(userId: live.userID, roles: live.roles, sessionId: live.sessionID, guest: live.guest ? true : nil)
    }
}
