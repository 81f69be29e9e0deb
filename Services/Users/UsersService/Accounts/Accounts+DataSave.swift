import DataEngine
import InternalProtocol
import Logging

extension Accounts {
    /// `users.save`: a save to `Users` through the data API that carries a password, for the
    /// call's identity — a registration without an `objectId` (a guest's own id converts it),
    /// else a profile update that re-hashes the password and ends the user's other sessions.
    package func save(_ request: SaveUser.Request, identity: Identity, logger: Logger) async throws -> SaveUser.Response
    {
        let object: JSONObject
        do {
            guard let parsed = try JSONParser.parse(request.object).object else {
                throw UserError.missingRegistrationData
            }
            object = parsed
        } catch is JSONParseError {
            throw UserError.missingRegistrationData
        }
        guard let id = request.objectId else {
            let user = try await register(
                appID: identity.appId, body: object, callerID: identity.userId, logger: logger)
            return SaveUser.Response(user: user, endedSessions: false)
        }
        var changes = object
        changes["objectId"] = nil
        let update = try await updateUser(id: id, body: changes, identity: identity, logger: logger)
        return SaveUser.Response(user: update.user, endedSessions: update.endedSessions)
    }
}
