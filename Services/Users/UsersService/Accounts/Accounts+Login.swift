import DataEngine
import Foundation
import InternalProtocol
import Logging
import QueryLanguage

extension Accounts {
    /// What a login attempt decided; failures are committed before they are thrown, so a
    /// failed attempt still counts towards lockout.
    private enum Outcome: Sendable {
        case loggedIn(String)
        case refused(ErrorEnvelope)
    }

    /// `POST /users/login` `{login, password}`: the user with a new `user-token`. Attempts are
    /// rate limited per login and per `clientAddress` before any hashing; 3001 when the app's
    /// settings name an identity property `Users` lacks.
    package func login(appID: String, body: JSONObject, clientAddress: String? = nil, logger: Logger) async throws
        -> String
    {
        let (login, password) = try Self.loginArguments(body)
        try await throttle.admit(identity: appID + " " + login.lowercased(), address: clientAddress)
        let policy = try await loginSettings(appID, logger: logger)
        guard let user = try await findUser(appID: appID, identity: login, policy: policy, logger: logger) else {
            _ = try await hasher.verify(password, hash: hasher.decoy)
            throw UserError.invalidLogin
        }
        let profile = try JSONParser.parse(user).object
        guard let userID = profile?["objectId"]?.string else { throw ErrorEnvelope.internalError }
        let moment = now()
        // bcrypt runs before the transaction: a slow hash must never hold the row lock or a
        // pooled connection, or hammering one account would stall every login and token check.
        let stored = try await Credentials.read(appID: appID, userID: userID, lock: false, session: pool(logger))
        if let lockedUntil = stored?.lockedUntil, lockedUntil > moment { throw UserError.lockedOut }
        let matches = try await hasher.verify(password, hash: stored?.hash ?? hasher.decoy) && stored != nil
        let outcome = try await engine.transaction(identity: Self.system(appID), logger: logger) { transaction in
            let session = transaction.session
            guard
                let credentials = try await Credentials.read(appID: appID, userID: userID, lock: true, session: session)
            else { return Outcome.refused(UserError.invalidLogin) }
            // A concurrent attempt may have locked the account or changed the password meanwhile.
            if let lockedUntil = credentials.lockedUntil, lockedUntil > moment { return .refused(UserError.lockedOut) }
            guard matches, credentials.hash == stored?.hash else {
                try await Credentials.recordFailure(
                    appID: appID, userID: userID, policy: policy, now: moment, session: session)
                return .refused(UserError.invalidLogin)
            }
            switch profile?["userStatus"]?.string {
            case "DISABLED": return .refused(UserError.accountDisabled)
            case "EMAIL_CONFIRMATION_PENDING": return .refused(UserError.loginDisabled)
            default: break
            }
            try await Credentials.recordSuccess(appID: appID, userID: userID, session: session)
            if let refusal = try await Sessions.makeRoom(
                appID: appID, userID: userID, policy: policy, now: moment, session: session)
            {
                return .refused(refusal)
            }
            let token = SessionToken.generate()
            try await Sessions.insert(appID: appID, userID: userID, token: token, now: moment, session: session)
            let stamped = try await transaction.update(
                Self.usersTable, id: userID,
                changes: JSONObject([("lastLogin", .integer(Int64((moment.timeIntervalSince1970 * 1000).rounded())))]))
            return .loggedIn(try Self.adding(token: token, to: stamped))
        }
        switch outcome {
        case .loggedIn(let user): return user
        case .refused(let error): throw error
        }
    }

    private static func loginArguments(_ body: JSONObject) throws -> (String, String) {
        guard case .string(let login)? = body["login"], case .string(let password)? = body["password"] else {
            throw UserError.missingLoginArguments
        }
        guard !login.isEmpty, !password.isEmpty else { throw UserError.emptyLogin }
        guard login.count <= identityLimit else { throw UserError.tooLong("login", limit: identityLimit) }
        guard password.utf8.count <= passwordByteLimit else {
            throw UserError.tooLong("password", limit: passwordByteLimit)
        }
        return (login, password)
    }

    /// The app's policy for a login: 3001 when `Users` exists without a column for the identity
    /// property (dropped through the schema API), where a look-up would otherwise fail with a
    /// data-service code. No `Users` table at all is no such case: nobody has registered yet.
    private func loginSettings(_ appID: String, logger: Logger) async throws -> UserPolicy {
        let policy = try await policy(appID, logger: logger)
        if let table = try await engine.tableSchema(Self.usersTable, appID: appID),
            table.column(named: policy.identityProperty) == nil
        {
            throw UserError.missingLoginSettings(identityProperty: policy.identityProperty)
        }
        return policy
    }

    /// The profile whose identity property equals `identity`, or nil (also when `Users` or its
    /// identity column does not exist: no user can have that identity).
    func findUser(appID: String, identity: String, policy: UserPolicy, logger: Logger) async throws -> String? {
        guard let table = try await engine.tableSchema(Self.usersTable, appID: appID),
            table.column(named: policy.identityProperty) != nil
        else { return nil }
        var query = FindQuery()
        query.condition = .comparison(.property(PropertyPath([policy.identityProperty])), .equal, .string(identity))
        query.pageSize = 1
        return try await engine.find(Self.usersTable, query: query, identity: Self.system(appID), logger: logger).first
    }

    /// The user's JSON with `"user-token"` added.
    static func adding(token: String, to user: String) throws -> String {
        guard case .object(var object) = try JSONParser.parse(user) else { throw ErrorEnvelope.internalError }
        object["user-token"] = .string(token)
        return JSONValue.object(object).jsonText
    }
}
