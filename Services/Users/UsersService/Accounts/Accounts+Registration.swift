import DataEngine
import Foundation
import InternalProtocol
import Logging
import NIOCore
import QueryLanguage

extension Accounts {
    /// `POST /users/register`: validates the body against the app's policy and the `Users`
    /// schema, then writes the profile and the password hash in one transaction. Returns the
    /// saved user (never the password); registration does not log in. A body with the
    /// `objectId` of a guest turns that guest into a registered user — only with the guest's own
    /// token (`callerID`; 3029 otherwise, 3030 for an id that is no guest).
    package func register(appID: String, body: JSONObject, callerID: String? = nil, logger: Logger) async throws
        -> String
    {
        let policy = try await policy(appID, logger: logger)
        guard policy.registrationEnabled else { throw UserError.registrationDisabled }
        let password = try Self.registrationPassword(body)
        let profile = try Self.profile(body, policy: policy)
        if policy.emailConfirmation { _ = try requireMail() }
        let system = Self.system(appID)
        let refusals = RegistrationRefusals(profiles: [profile], policy: policy, appID: appID)
        try await mapping(refusals, logger: logger) {
            try await prepareUsersTable(for: [profile], policy: policy, appID: appID, logger: logger)
        }
        let guestID = body["objectId"]?.string
        if let guestID {
            guard guestID == callerID else { throw UserError.convertingAnotherGuest }
            try await requireGuest(guestID, appID: appID, logger: logger)
        }
        let hash = try await hasher.hash(password)
        let user = try await mapping(refusals, logger: logger) {
            try await engine.transaction(identity: system, logger: logger) { transaction in
                let saved =
                    if let guestID {
                        try await transaction.update(Self.usersTable, id: guestID, changes: profile)
                    } else {
                        try await transaction.create(Self.usersTable, object: profile)
                    }
                guard
                    try await Credentials.insert(
                        appID: appID, userID: try Self.objectId(of: saved), hash: hash, session: transaction.session)
                else { throw UserError.unknownUser }  // a concurrent conversion of the same guest won
                if let guestID {
                    try await Sessions.endGuestStatus(appID: appID, userID: guestID, session: transaction.session)
                }
                return saved
            }
        }
        if policy.emailConfirmation { confirm(appID: appID, user: user, policy: policy, logger: logger) }
        return user
    }

    /// The most users one bulk registration creates (a data API bulk create's limit).
    static let bulkRegistrationLimit = 100

    /// A bulk create of `Users` through the data API carrying passwords: each object registers
    /// as ``register(appID:body:callerID:logger:)`` would (the same switch, validations and
    /// errors; no guest is converted), all in one transaction — every user or none. The new
    /// users' ids, in request order.
    package func registerMany(appID: String, bodies: [JSONObject], logger: Logger) async throws -> [String] {
        guard bodies.count <= Self.bulkRegistrationLimit else { throw DataError.bulkLimit(Self.bulkRegistrationLimit) }
        let policy = try await policy(appID, logger: logger)
        guard policy.registrationEnabled else { throw UserError.registrationDisabled }
        var accounts: [(password: String, profile: JSONObject)] = []
        for body in bodies {
            guard body["objectId"] == nil else {
                throw DataError.invalidBody(
                    "A bulk registration takes no objectId: a guest becomes a user by a single save with its own token")
            }
            accounts.append((try Self.registrationPassword(body), try Self.profile(body, policy: policy)))
        }
        if policy.emailConfirmation { _ = try requireMail() }
        let refusals = RegistrationRefusals(profiles: accounts.map(\.profile), policy: policy, appID: appID)
        try await mapping(refusals, logger: logger) {
            try await prepareUsersTable(for: refusals.profiles, policy: policy, appID: appID, logger: logger)
        }
        var hashes: [String] = []
        for account in accounts { hashes.append(try await hasher.hash(account.password)) }
        let users = try await mapping(refusals, logger: logger) {
            try await engine.transaction(identity: Self.system(appID), logger: logger) { transaction in
                var saved: [String] = []
                for (account, hash) in zip(accounts, hashes) {
                    let user = try await transaction.create(Self.usersTable, object: account.profile)
                    guard
                        try await Credentials.insert(
                            appID: appID, userID: try Self.objectId(of: user), hash: hash,
                            session: transaction.session)
                    else { throw ErrorEnvelope.internalError }
                    saved.append(user)
                }
                return saved
            }
        }
        if policy.emailConfirmation {
            for user in users { confirm(appID: appID, user: user, policy: policy, logger: logger) }
        }
        return try users.map(Self.objectId(of:))
    }

    /// Makes sure `Users` has the profile columns and can hold `profiles` (1013 as the users
    /// API's own error when the schema is static).
    private func prepareUsersTable(for profiles: [JSONObject], policy: UserPolicy, appID: String, logger: Logger)
        async throws
    {
        try await engine.ensure(
            table: Self.usersTable, columns: Self.profileColumns(policy), appID: appID, logger: logger)
        do {
            try await engine.prepareSchema(
                Self.usersTable, objects: profiles, identity: Self.system(appID), logger: logger)
        } catch let error as ErrorEnvelope where error.code == 1013 {
            throw UserError.unknownPropertyWhileStatic
        }
    }

    /// What a registration writes, for naming the data engine's refusals of it.
    private struct RegistrationRefusals: Sendable {
        let profiles: [JSONObject]
        let policy: UserPolicy
        let appID: String
    }

    /// Runs `body`, naming the data engine's refusals (its 1000–1999 codes) as the users API
    /// does: see ``registrationError(_:_:logger:)``. The users API's own errors pass unchanged.
    private func mapping<Value>(_ refusals: RegistrationRefusals, logger: Logger, _ body: () async throws -> Value)
        async throws -> Value
    {
        do {
            return try await body()
        } catch let error as ErrorEnvelope where (1000..<2000).contains(error.code) {
            throw try await registrationError(error, refusals, logger: logger)
        }
    }

    /// 3012 for a required property without a value, 3033 for a unique violation where an
    /// identity value is taken (by another user, or twice in one bulk registration), and 3021
    /// with the engine's own description for anything else: a value its column cannot hold, a
    /// property name that cannot be a column, a unique column other than the identity.
    private func registrationError(_ error: ErrorEnvelope, _ refusals: RegistrationRefusals, logger: Logger)
        async throws -> ErrorEnvelope
    {
        switch error.code {
        case DataError.requiredValueMissing.code:
            return UserError.requiredPropertyMissing
        case DataError.duplicateValue.code where error == DataError.duplicateValue:
            if try await identityTaken(refusals, logger: logger) { return UserError.identityTaken }
        default:
            break
        }
        return UserError.registrationFailed(error)
    }

    /// Whether two profiles share an identity value or a user already holds one of them. A
    /// refused write was rolled back and PostgreSQL reports a unique violation only once the
    /// other row is committed, so a user found now is the one the write collided with.
    private func identityTaken(_ refusals: RegistrationRefusals, logger: Logger) async throws -> Bool {
        let property = refusals.policy.identityProperty
        let identities = refusals.profiles.compactMap { $0[property]?.string }
        guard !identities.isEmpty else { return false }
        if Set(identities).count < identities.count { return true }
        var query = FindQuery()
        query.condition = .membership(
            .property(PropertyPath([property])), identities.map { .string($0) }, negated: false)
        query.pageSize = 1
        let found = try await engine.find(
            Self.usersTable, query: query, identity: Self.system(refusals.appID), logger: logger)
        return !found.isEmpty
    }

    /// Mails a new user the confirmation link in the background, so that a slow relay never
    /// turns a registration into a timeout. The registration stands if the mail fails: the
    /// user can ask for the link again.
    private func confirm(appID: String, user: String, policy: UserPolicy, logger: Logger) {
        Task {
            do {
                guard let profile = try JSONParser.parse(user).object else { return }
                try await sendConfirmation(
                    appID: appID, profile: profile, policy: policy, deadline: .now() + .seconds(40), logger: logger)
            } catch {
                logger.warning("confirmation email not sent", metadata: ["error": "\(error)"])
            }
        }
    }

    /// `POST /users/register/guest`: a profile with status GUEST and no password, logged in at
    /// once (the user with its `user-token`). Registering with its `objectId` converts it.
    package func registerGuest(appID: String, logger: Logger) async throws -> String {
        let policy = try await policy(appID, logger: logger)
        guard policy.registrationEnabled else { throw UserError.registrationDisabled }
        try await engine.ensure(
            table: Self.usersTable, columns: Self.profileColumns(policy), appID: appID, logger: logger)
        let moment = now()
        let profile = JSONObject([("userStatus", .string("GUEST"))])
        let refusals = RegistrationRefusals(profiles: [profile], policy: policy, appID: appID)
        return try await mapping(refusals, logger: logger) {
            try await engine.transaction(identity: Self.system(appID), logger: logger) { transaction in
                let user = try await transaction.create(Self.usersTable, object: profile)
                let token = SessionToken.generate()
                try await Sessions.insert(
                    appID: appID, userID: try Self.objectId(of: user), token: token, now: moment, guest: true,
                    session: transaction.session)
                return try Self.adding(token: token, to: user)
            }
        }
    }

    /// 3030 unless `id` names a guest.
    private func requireGuest(_ id: String, appID: String, logger: Logger) async throws {
        let row = try await engine.object(
            Self.usersTable, matching: [("objectId", id)], query: FindQuery(), identity: Self.system(appID),
            logger: logger)
        guard let row, try JSONParser.parse(row).object?["userStatus"]?.string == "GUEST" else {
            throw UserError.unknownUser
        }
    }

    private static func registrationPassword(_ body: JSONObject) throws -> String {
        guard body["id"] == nil else { throw UserError.idProperty }
        guard case .string(let password)? = body["password"], !password.isEmpty else { throw UserError.missingPassword }
        guard password.utf8.count <= passwordByteLimit else {
            throw UserError.tooLong("password", limit: passwordByteLimit)
        }
        return password
    }

    /// The profile row: the body without the password, with status ENABLED, or awaiting
    /// confirmation (which needs an email address) when the app confirms addresses.
    private static func profile(_ body: JSONObject, policy: UserPolicy) throws -> JSONObject {
        guard case .string(let identity)? = body[policy.identityProperty],
            !identity.trimmingCharacters(in: .whitespaces).isEmpty
        else { throw UserError.missingIdentity }
        guard identity.count <= identityLimit else {
            throw UserError.tooLong(policy.identityProperty, limit: identityLimit)
        }
        if let email = body["email"], email != .null {
            guard let text = email.string, EmailAddress.isValid(text) else { throw UserError.badEmail }
        } else if policy.emailConfirmation {
            throw UserError.emailRequired
        }
        var profile = body
        profile["password"] = nil
        profile["objectId"] = nil
        profile["user-token"] = nil
        profile["userStatus"] = .string(policy.emailConfirmation ? "EMAIL_CONFIRMATION_PENDING" : "ENABLED")
        return profile
    }

    /// The `objectId` of a row the engine returned.
    static func objectId(of row: String) throws -> String {
        guard let id = try JSONParser.parse(row).object?["objectId"]?.string else { throw ErrorEnvelope.internalError }
        return id
    }
}

/// A pragmatic email check: one `@`, a non-empty local part, a dotted domain, no spaces.
enum EmailAddress {
    static func isValid(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, text.count <= Accounts.identityLimit else { return false }
        let domain = parts[1]
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty }
            && !text.contains(where: { $0.isWhitespace || $0 == "," || $0 == ";" })
    }
}
