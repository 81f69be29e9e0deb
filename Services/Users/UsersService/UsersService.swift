import Configuration
import DataEngine
import InternalProtocol
import NIOCore
import PostgresSupport
import ServiceRuntime

/// users-service: apps and API keys, and users' registration, login and sessions. Profiles are
/// rows of each app's `Users` table, written through the shared data engine.
///
/// Configuration: `BAAS_USERS_BCRYPT_COST` (default 11; tests use 4),
/// `BAAS_USERS_LOGIN_ATTEMPTS_PER_MINUTE` (password checks per identity, default 10) and
/// `BAAS_USERS_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE` (per client address, default 60), both per
/// `BAAS_USERS_LOGIN_ATTEMPTS_WINDOW_SECONDS` (default 60), and
/// `BAAS_USERS_PUBLIC_URL`, the gateway's public base URL that emailed links point to (default
/// `http://localhost:8080`); the emails themselves go out through messaging-service.
package enum UsersService: BackendService {
    package static let name = ServiceName.users

    package static let migrations: [any DatabaseMigration] = [
        m0001CreateApps, m0002CreateAccounts, m0003CreateRoles, m0004CreateEmailActions, m0005ActionTokenAddresses,
        m0006GuestSessions,
    ]

    /// The data catalog, which the embedded data engine reads and writes.
    package static let sharedMigrations: [(owner: ServiceName, migrations: [any DatabaseMigration])] = [
        (.data, CatalogMigrations.all)
    ]

    package static func register(
        operations: inout OperationRegistry, routes: inout PublicRoutes, environment: ServiceEnvironment
    ) throws {
        let apps = AppRepository(database: environment.database)
        operations.register(ResolveAPIKey.self) { request, context in
            try await apps.resolve(appId: request.appId, apiKey: request.apiKey, logger: context.logger)
        }
        operations.register(GetApp.self) { request, context in
            try await apps.app(id: request.appId, logger: context.logger)
        }
        let engine = DataEngine(
            database: environment.database, logger: environment.logger, prepared: environment.preparedStatements)
        environment.background.add(engine.listener)
        let accounts = Accounts(
            engine: engine, database: environment.database, bcryptCost: try bcryptCost(environment.configuration),
            attemptsPerMinute: try loginRates(environment.configuration),
            attemptWindowSeconds: try loginWindow(environment.configuration), mail: mail(environment))
        operations.register(ResolveUserToken.self) { request, context in
            try await accounts.resolve(appID: request.appId, token: request.token, logger: context.logger)
        }
        operations.register(ResolveSession.self) { request, context in
            try await accounts.resolve(appID: request.appId, sessionID: request.sessionId, logger: context.logger)
        }
        operations.register(SaveUser.self) { request, context in
            guard let identity = context.identity else { throw ErrorEnvelope.internalError }
            return try await accounts.save(request, identity: identity, logger: context.logger)
        }
        operations.register(RegisterUsers.self) { request, context in
            guard let identity = context.identity else { throw ErrorEnvelope.internalError }
            let bodies = try request.objects.map { text in
                guard let object = try? JSONParser.parse(text).object else { throw UserError.missingRegistrationData }
                return object
            }
            return RegisterUsers.Response(
                ids: try await accounts.registerMany(appID: identity.appId, bodies: bodies, logger: context.logger))
        }
        routes.pathParameters = [
            "identity": APISchema.string.length(1).examples(.text(DocumentExamples.email)),
            "id": APISchema.string.length(1).examples(.text(DocumentExamples.profileUserID)),
            "name": APISchema.string.length(1).examples(.text(DocumentExamples.role)),
            "event": .choice(EmailTemplate.Event.allCases.map(\.rawValue)),
        ]
        routes.removalPathParameters = ["name": DocumentExamples.named(DocumentExamples.disposableName)]
        UserRoutes(accounts: accounts).add(to: &routes)
    }

    /// Confirmation and reset emails, sent through messaging-service's `email.send`.
    static func mail(_ environment: ServiceEnvironment) -> AccountMail {
        let publicURL = environment.configuration.reader.string(
            forKey: ConfigKey(["users", "publicUrl"]), default: "http://localhost:8080")
        let peers = environment.peers
        return AccountMail(publicURL: publicURL) { request, logger, deadline in
            let context = CallContext(deadline: deadline, logger: logger)
            _ = try await peers.call(SendEmail.self, request, on: .messaging, context: context)
        }
    }

    /// The login rate limits per identity and per client address (each at least 1).
    package static func loginRates(_ configuration: RuntimeConfiguration) throws -> (identity: Int, address: Int) {
        let reader = configuration.reader.scoped(to: "users").scoped(to: "loginAttempts")
        let identity = reader.int(forKey: "perMinute", default: 10)
        let address = reader.int(forKey: "perAddressPerMinute", default: 60)
        guard identity >= 1, address >= 1 else {
            throw UsageError("login attempt limits must be at least 1 per minute")
        }
        return (identity, address)
    }

    /// `BAAS_USERS_LOGIN_ATTEMPTS_WINDOW_SECONDS`: the window the login limits count over
    /// (default 60, so they are per minute).
    package static func loginWindow(_ configuration: RuntimeConfiguration) throws -> Int {
        let seconds = configuration.reader.scoped(to: "users").scoped(to: "loginAttempts").int(
            forKey: "windowSeconds", default: 60)
        guard seconds >= 1 else { throw UsageError("BAAS_USERS_LOGIN_ATTEMPTS_WINDOW_SECONDS must be at least 1") }
        return seconds
    }

    /// `BAAS_USERS_BCRYPT_COST`, default 11. bcrypt itself traps outside 4...31, so a bad
    /// setting stops start-up with a message instead.
    package static func bcryptCost(_ configuration: RuntimeConfiguration) throws -> Int {
        let cost = configuration.reader.int(forKey: ConfigKey(["users", "bcryptCost"]), default: 11)
        guard (4...31).contains(cost) else { throw UsageError("BAAS_USERS_BCRYPT_COST must be 4...31, got \(cost)") }
        return cost
    }
}
