import DataEngine
import Foundation
import InternalProtocol
import Logging
import QueryLanguage

extension Accounts {
    /// Profile properties only users-service writes (lower-cased): a user update ignores them in
    /// any spelling, as SDKs send the whole user object back.
    static let managedProperties: Set<String> = ["objectid", "userstatus", "lastlogin", "user-token"]
    /// The statuses `PUT /users/{id}/status` may set.
    static let settableStatuses: Set<String> = ["ENABLED", "DISABLED", "EMAIL_CONFIRMATION_PENDING"]

    /// What changed when a user was updated.
    package struct Update: Sendable {
        /// The user as saved.
        package let user: String
        /// Whether sessions were ended (a new password).
        package let endedSessions: Bool
    }

    /// `PUT /users/{id}`: a partial update of one's own profile (any profile with the
    /// server-code key). A new password is re-hashed and ends the user's other sessions; a new
    /// email address takes the links mailed to the old one with it.
    package func updateUser(id: String, body: JSONObject, identity: Identity, logger: Logger) async throws -> Update {
        if identity.keyKind != .serverCode {
            guard let caller = identity.userId else { throw UserError.notLoggedIn }
            guard caller == id else { throw UserError.anotherUser }
        }
        let policy = try await policy(identity.appId, logger: logger)
        let (changes, password) = try Self.profileChanges(body, policy: policy)
        if password != nil || changes.members.contains(where: { Self.isIdentityKey($0.key, policy) }) {
            try await refuseGuest(id, appID: identity.appId, logger: logger)
        }
        let hash: String? = if let password { try await hasher.hash(password) } else { nil }
        let system = Self.system(identity.appId)
        do {
            if !changes.members.isEmpty {
                try await engine.prepareSchema(Self.usersTable, objects: [changes], identity: system, logger: logger)
            }
            let user = try await engine.transaction(identity: system, logger: logger) { transaction in
                let user = try await transaction.update(Self.usersTable, id: id, changes: changes)
                if Self.value("email", in: changes) != nil {
                    let address = try JSONParser.parse(user).object?["email"]?.string
                    try await ActionTokens.revoke(
                        appID: identity.appId, userID: id, keeping: address, session: transaction.session)
                }
                if let hash {
                    try await Credentials.store(
                        appID: identity.appId, userID: id, hash: hash, session: transaction.session)
                    let keeping = identity.userId == id ? identity.sessionId : nil
                    try await Sessions.endAll(
                        appID: identity.appId, userID: id, keeping: keeping, session: transaction.session)
                }
                return user
            }
            return Update(user: user, endedSessions: hash != nil)
        } catch let error as ErrorEnvelope {
            throw Self.updateError(error)
        }
    }

    /// The seed's update codes for the data engine's: unknown user 3030, taken identity 3018,
    /// new property with dynamic schema off 3031, required property without value 3045.
    private static func updateError(_ error: ErrorEnvelope) -> ErrorEnvelope {
        switch error.code {
        case 1000, 1009: UserError.unknownUser
        case 1015: UserError.identityTakenOnUpdate
        case 1013: UserError.unknownPropertyOnUpdate
        case 1014: UserError.requiredValuesMissing
        default: error
        }
    }

    /// Whether `key` names the identity property or `email`, in any spelling.
    private static func isIdentityKey(_ key: String, _ policy: UserPolicy) -> Bool {
        [policy.identityProperty.lowercased(), "email"].contains(key.lowercased())
    }

    /// A guest gets a password or an identity only by registering (with its objectId), which
    /// applies the registration rules and email confirmation; 3024 otherwise.
    private func refuseGuest(_ id: String, appID: String, logger: Logger) async throws {
        let row = try await engine.object(
            Self.usersTable, matching: [("objectId", id)], query: FindQuery(), identity: Self.system(appID),
            logger: logger)
        guard let row, try JSONParser.parse(row).object?["userStatus"]?.string == "GUEST" else { return }
        throw UserError.guestUpdate
    }

    /// The value of `name` in `body` in any spelling (the engine matches columns ignoring case).
    private static func value(_ name: String, in body: JSONObject) -> JSONValue? {
        let wanted = name.lowercased()
        return body.members.first { $0.key.lowercased() == wanted }?.value
    }

    /// The profile changes and the new password, if any, checked as registration checks them.
    private static func profileChanges(_ body: JSONObject, policy: UserPolicy) throws -> (JSONObject, String?) {
        var changes = JSONObject(body.members.filter { !managedProperties.contains($0.key.lowercased()) })
        var password: String?
        if let value = body["password"] {
            guard case .string(let text) = value, !text.isEmpty else { throw UserError.requiredValuesMissing }
            guard text.utf8.count <= passwordByteLimit else {
                throw UserError.tooLong("password", limit: passwordByteLimit)
            }
            password = text
            changes["password"] = nil
        }
        if let identity = value(policy.identityProperty, in: body) {
            guard let text = identity.string, !text.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw UserError.requiredValuesMissing
            }
            guard text.count <= identityLimit else {
                throw UserError.tooLong(policy.identityProperty, limit: identityLimit)
            }
        }
        if let email = value("email", in: body), email != .null {
            guard let text = email.string, EmailAddress.isValid(text) else { throw UserError.badEmail }
        }
        return (changes, password)
    }

    /// `PUT /users/{id}/status` (server-code key): enables or disables an account, or marks it
    /// awaiting email confirmation. Disabling ends every session of the user at once.
    package func setStatus(id: String, body: JSONObject, identity: Identity, logger: Logger) async throws -> String {
        try Self.requireServerCode(identity)
        guard let status = body["userStatus"]?.string else { throw UserError.missingStatus }
        guard Self.settableStatuses.contains(status) else { throw UserError.unknownStatus(status) }
        do {
            return try await engine.transaction(identity: Self.system(identity.appId), logger: logger) { transaction in
                let user = try await transaction.update(
                    Self.usersTable, id: id, changes: JSONObject([("userStatus", .string(status))]))
                if status != "ENABLED" {
                    try await Sessions.endAll(
                        appID: identity.appId, userID: id, keeping: nil, session: transaction.session)
                }
                return user
            }
        } catch let error as ErrorEnvelope {
            throw Self.updateError(error)
        }
    }

    /// `POST /users/verifypassowrd` (sic): whether `password` is the logged-in user's. It is a
    /// password guess like a login: a wrong one counts towards the account's lockout, and a
    /// locked account answers 3036 whatever the password.
    package func verifyPassword(body: JSONObject, identity: Identity, logger: Logger) async throws -> Bool {
        guard let userID = identity.userId else { throw UserError.notLoggedIn }
        guard case .string(let password)? = body["password"], !password.isEmpty else { throw UserError.missingPassword }
        guard password.utf8.count <= Self.passwordByteLimit else { return false }
        try await throttle.admit(identity: identity.appId + " " + userID, address: nil)
        let moment = now()
        // bcrypt runs before the transaction, as in login: a slow hash must never hold the row lock.
        let stored = try await Credentials.read(
            appID: identity.appId, userID: userID, lock: false, session: pool(logger))
        if let lockedUntil = stored?.lockedUntil, lockedUntil > moment { throw UserError.lockedOut }
        let matches = try await hasher.verify(password, hash: stored?.hash ?? hasher.decoy) && stored != nil
        guard let stored else { return false }
        let policy = try await policy(identity.appId, logger: logger)
        let check = try await pool(logger).transaction { session in
            try await Self.recordPasswordCheck(
                matches: matches, hashChecked: stored.hash, appID: identity.appId, userID: userID, policy: policy,
                now: moment, session: session)
        }
        switch check {
        case .valid: return true
        case .invalid: return false
        case .lockedOut: throw UserError.lockedOut
        }
    }

    /// What a password check decided, committed before it is answered so a wrong guess counts.
    private enum PasswordCheck: Sendable {
        case valid, invalid, lockedOut
    }

    /// Records a checked password the way login does, under the credentials' row lock: a lock
    /// set meanwhile wins, a wrong password (or one changed since it was hashed) counts as a
    /// failed login, and a right one clears the counters.
    private static func recordPasswordCheck(
        matches: Bool, hashChecked: String, appID: String, userID: String, policy: UserPolicy, now: Date,
        session: DatabaseSession
    ) async throws -> PasswordCheck {
        guard let credentials = try await Credentials.read(appID: appID, userID: userID, lock: true, session: session)
        else { return .invalid }
        if let lockedUntil = credentials.lockedUntil, lockedUntil > now { return .lockedOut }
        guard matches, credentials.hash == hashChecked else {
            try await Credentials.recordFailure(
                appID: appID, userID: userID, policy: policy, now: now, session: session)
            return .invalid
        }
        try await Credentials.recordSuccess(appID: appID, userID: userID, session: session)
        return .valid
    }

    /// `GET /users/userclassprops`: the `Users` columns in the contract's shape with the
    /// identity flag, plus the `password` property (required, never stored in the table).
    package func userClassProperties(appID: String, logger: Logger) async throws -> String {
        let policy = try await policy(appID, logger: logger)
        try await engine.ensure(
            table: Self.usersTable, columns: Self.profileColumns(policy), appID: appID, logger: logger)
        guard let table = try await engine.tableSchema(Self.usersTable, appID: appID) else {
            throw ErrorEnvelope.internalError
        }
        let password = ColumnSchema(name: "password", type: .string, required: true)
        let properties = (table.columns + [password]).map { column in
            guard case .object(var description) = DataEngine.describe(column) else { return JSONValue.null }
            description["identity"] = .bool(column.name == policy.identityProperty)
            return .object(description)
        }
        return JSONValue.array(properties).jsonText
    }

    /// 4000 unless the request came with the server-code key.
    static func requireServerCode(_ identity: Identity) throws {
        guard identity.keyKind == .serverCode else { throw UserError.serverCodeOnly }
    }
}
