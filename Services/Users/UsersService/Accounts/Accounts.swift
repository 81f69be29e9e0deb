import DataEngine
import Foundation
import InternalProtocol
import Logging
import PostgresNIO
import QueryLanguage

/// Users' accounts: registration, login and sessions. A profile is a row of the app's `Users`
/// table written through the shared data engine in the same transaction as its credentials,
/// so no half-registered user is ever visible. Every time comparison uses ``now``, which
/// tests replace.
package struct Accounts: Sendable {
    /// The profile table.
    static let usersTable = "Users"
    /// bcrypt reads at most 72 bytes; a longer password would be silently truncated.
    static let passwordByteLimit = 72
    /// The longest identity value (an email address's limit).
    static let identityLimit = 254

    let engine: DataEngine
    let database: PostgresClient
    let hasher: PasswordHasher
    let throttle: LoginThrottle
    /// How confirmation and reset emails go out; nil when email is not configured.
    let mail: AccountMail?
    let now: @Sendable () -> Date

    /// Creates the accounts over `engine` and `database` with bcrypt at `bcryptCost`, password
    /// checks limited to `attemptsPerMinute` per identity and per client address (per
    /// `attemptWindowSeconds`, a minute unless set otherwise), emails sent
    /// through `mail`, and the clock `now`.
    package init(
        engine: DataEngine, database: PostgresClient, bcryptCost: Int,
        attemptsPerMinute: (identity: Int, address: Int) = (10, 60), attemptWindowSeconds: Int = 60,
        mail: AccountMail? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.mail = mail
        self.engine = engine
        self.database = database
        self.hasher = PasswordHasher(cost: UInt8(clamping: bcryptCost))
        self.throttle = LoginThrottle(
            limits: .init(
                perIdentity: attemptsPerMinute.identity, perAddress: attemptsPerMinute.address,
                window: Double(attemptWindowSeconds)),
            now: now)
        self.now = now
    }

    /// The identity the accounts act as towards the data engine: the service itself, which the
    /// app's permissions do not restrict (an app hiding `Users` from clients must still let
    /// its users log in).
    static func system(_ appID: String) -> Identity {
        var identity = Identity(appId: appID, keyKind: .serverCode, roles: [APIKeyKind.serverCode.role])
        identity.isSystem = true
        return identity
    }

    /// The columns every `Users` table has: the identity property (unique) and the profile's
    /// status and login time.
    static func profileColumns(_ policy: UserPolicy) -> [ColumnSchema] {
        var columns = [
            ColumnSchema(name: policy.identityProperty, type: .string, unique: true),
            ColumnSchema(name: "userStatus", type: .string), ColumnSchema(name: "lastLogin", type: .datetime),
        ]
        if policy.identityProperty != "email" { columns.append(ColumnSchema(name: "email", type: .string)) }
        if policy.identityProperty != "name" { columns.append(ColumnSchema(name: "name", type: .string)) }
        return columns
    }

    func policy(_ appID: String, logger: Logger) async throws -> UserPolicy {
        try await UserPolicy.load(appID: appID, session: pool(logger))
    }

    func pool(_ logger: Logger) -> DatabaseSession {
        DatabaseSession(pool: database, logger: logger, prepared: engine.prepared)
    }
}
