import DataEngine
import Foundation
import InternalProtocol
import PostgresNIO
import PostgresSupport
import ServiceRuntime
import Synchronization
import TestSupport
import Testing
import UsersService

/// Registration, login, lockout and sessions against a real database, with the clock injected.
@Suite(.timeLimit(.minutes(20))) struct AccountsTests {
    /// A clock tests move by hand.
    final class ManualClock: Sendable {
        private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var now: Date { current.withLock { $0 } }
        func advance(_ seconds: Double) { current.withLock { $0 += seconds } }
    }

    /// The emails the accounts asked to send (delivery itself is tested through SMTP elsewhere).
    actor Outbox {
        private(set) var sent: [SendEmail.Request] = []
        func add(_ request: SendEmail.Request) { sent.append(request) }
    }

    struct Fixture: Sendable {
        let accounts: Accounts
        let engine: DataEngine
        let database: PostgresClient
        let clock: ManualClock
        let outbox: Outbox
        let appID = UUID().uuidString
        let logger = TestDatabase.logger

        func body(_ json: String) throws -> JSONObject { try #require(try JSONParser.parse(json).object) }

        func register(_ json: String, as callerID: String? = nil) async throws -> [String: Any] {
            try decode(
                try await accounts.register(appID: appID, body: try body(json), callerID: callerID, logger: logger))
        }

        func login(_ login: String, _ password: String) async throws -> [String: Any] {
            try decode(
                try await accounts.login(
                    appID: appID, body: JSONObject([("login", .string(login)), ("password", .string(password))]),
                    logger: logger))
        }

        func decode(_ text: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        }

        /// Sets policy columns for the app (name → SQL literal written by the test).
        func setPolicy(_ assignments: String) async throws {
            _ = try await database.query(
                PostgresQuery(
                    unsafeSQL: "INSERT INTO users.policies (app_id) VALUES ('\(appID)') ON CONFLICT DO NOTHING"),
                logger: logger
            ).collect()
            _ = try await database.query(
                PostgresQuery(unsafeSQL: "UPDATE users.policies SET \(assignments) WHERE app_id = '\(appID)'"),
                logger: logger
            ).collect()
        }

        func strings(_ sql: String) async throws -> [String] {
            var values: [String] = []
            for try await value in try await database.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(
                String.self)
            {
                values.append(value)
            }
            return values
        }

        func expectError(_ code: Int, status: Int? = nil, _ body: () async throws -> Void) async {
            do {
                try await body()
                Issue.record("expected error \(code)")
            } catch let error as ErrorEnvelope {
                #expect(error.code == code, "\(error)")
                if let status { #expect(error.status == status) }
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    /// Runs `body` over fresh accounts; login attempts are effectively unlimited unless a test
    /// sets `attemptsPerMinute`.
    static func with(
        attemptsPerMinute: (identity: Int, address: Int) = (10_000, 10_000),
        _ body: @Sendable (Fixture) async throws -> Void
    ) async throws {
        let logger = TestDatabase.logger
        try await TestDatabase.with { configuration in
            try await PostgresClient.with(configuration, logger: logger) { client in
                for (owner, migrations) in UsersService.sharedMigrations + [
                    (UsersService.name, UsersService.migrations)
                ] {
                    try await MigrationRunner(owner: owner.rawValue, migrations: migrations).apply(
                        on: client, logger: logger)
                }
                let engine = DataEngine(database: client, logger: logger)
                let clock = ManualClock()
                let outbox = Outbox()
                let mail = AccountMail(publicURL: "http://public.example/") { request, _, _ in await outbox.add(request)
                }
                let accounts = Accounts(
                    engine: engine, database: client, bcryptCost: 4, attemptsPerMinute: attemptsPerMinute, mail: mail,
                    now: { clock.now })
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await engine.listener.run() }
                    defer { group.cancelAll() }
                    for _ in 0..<3_000 where await !engine.cache.isListening {
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    #expect(await engine.cache.isListening)
                    try await body(
                        Fixture(accounts: accounts, engine: engine, database: client, clock: clock, outbox: outbox))
                }
            }
        }
    }

    @Test func registerThenLoginStoresOnlyHashes() async throws {
        try await Self.with { fixture in
            let user = try await fixture.register(
                #"{"email": "ann@example.com", "password": "s3cret!", "name": "Ann", "age": 30}"#)
            #expect(user["password"] == nil && user["user-token"] == nil)
            #expect(
                user["userStatus"] as? String == "ENABLED" && user["age"] as? Int == 30
                    && user["___class"] as? String == "Users")
            let userID = try #require(user["objectId"] as? String)

            let session = try await fixture.login("ann@example.com", "s3cret!")
            let token = try #require(session["user-token"] as? String)
            #expect(token.wholeMatch(of: /[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}/) != nil)
            #expect(session["objectId"] as? String == userID && session["password"] == nil)
            #expect(session["lastLogin"] as? Int == 1_800_000_000_000)

            let hashes = try await fixture.strings("SELECT password_hash FROM users.credentials")
            #expect(hashes.count == 1 && hashes[0].hasPrefix("$2b$04$") && !hashes[0].contains("s3cret"))
            let stored = try await fixture.strings("SELECT token_hash FROM users.sessions")
            #expect(stored.count == 1 && stored[0] != token && !stored[0].uppercased().contains(token))
            #expect(
                try await fixture.accounts.resolve(appID: fixture.appID, token: token, logger: fixture.logger).userId
                    == userID)
            await fixture.expectError(3064, status: 401) {
                _ = try await fixture.accounts.resolve(appID: fixture.appID, token: stored[0], logger: fixture.logger)
            }
            let columns = try await fixture.strings(
                "SELECT column_name::text FROM information_schema.columns WHERE table_name = 'Users'")
            #expect(!columns.contains("password"))
        }
    }

    @Test func registrationErrorsUseTheSeedCodes() async throws {
        try await Self.with { fixture in
            _ = try await fixture.register(#"{"email": "taken@example.com", "password": "p"}"#)
            let cases: [(String, Int)] = [
                (#"{"email": "a@example.com"}"#, 3011),
                (#"{"email": "a@example.com", "password": ""}"#, 3011),
                (#"{"password": "p"}"#, 3013),
                (#"{"email": "  ", "password": "p"}"#, 3013),
                (#"{"id": 1, "email": "a@example.com", "password": "p"}"#, 3039),
                (#"{"email": "not-an-email", "password": "p"}"#, 3040),
                (#"{"email": "a@example.com", "password": "\#(String(repeating: "x", count: 73))"}"#, 8000),
                (#"{"email": "taken@example.com", "password": "other"}"#, 3033),
                // A value the column cannot hold: the seed's general registration error, not 1012.
                (#"{"email": "b@example.com", "password": "p", "age": "thirty"}"#, 3021),
            ]
            _ = try await fixture.register(#"{"email": "typed@example.com", "password": "p", "age": 3}"#)
            for (json, code) in cases {
                await fixture.expectError(code) { _ = try await fixture.register(json) }
            }
            try await fixture.setPolicy("registration_enabled = false")
            await fixture.expectError(3009, status: 403) {
                _ = try await fixture.register(#"{"email": "c@example.com", "password": "p"}"#)
            }
            try await fixture.setPolicy("registration_enabled = true")
            _ = try await fixture.engine.setDynamicSchema(
                false, identity: Self.serverCode(fixture), logger: fixture.logger)
            await fixture.expectError(3010) {
                _ = try await fixture.register(#"{"email": "d@example.com", "password": "p", "hobby": "chess"}"#)
            }
            #expect(try await fixture.strings("SELECT user_id FROM users.credentials").count == 2)
        }
    }

    @Test func requiredPropertiesAreChecked() async throws {
        try await Self.with { fixture in
            _ = try await fixture.engine.addColumns(
                "Users", columns: [ColumnSchema(name: "nickname", type: .string, required: true)],
                identity: Self.serverCode(fixture), logger: fixture.logger)
            await fixture.expectError(3012) {
                _ = try await fixture.register(#"{"email": "e@example.com", "password": "p"}"#)
            }
            _ = try await fixture.register(#"{"email": "e@example.com", "password": "p", "nickname": "E"}"#)
            #expect(try await fixture.strings("SELECT user_id FROM users.credentials").count == 1)
        }
    }

    static func serverCode(_ fixture: Fixture) -> Identity {
        .anonymous(appId: fixture.appID, keyKind: .serverCode)
    }

    @Test func fiftyConcurrentRegistrationsOfOneEmailMakeOneUser() async throws {
        try await Self.with { fixture in
            let outcomes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        do {
                            _ = try await fixture.register(#"{"email": "same@example.com", "password": "p"}"#)
                            return 0
                        } catch let error as ErrorEnvelope {
                            return error.code
                        }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == 0 }.count == 1)
            #expect(outcomes.filter { $0 == 3033 }.count == 49, "\(outcomes)")
            #expect(try await fixture.strings("SELECT user_id FROM users.credentials").count == 1)
            #expect(
                try await fixture.strings(
                    #"SELECT "objectId" FROM "\#(AppCatalog.schemaName(for: fixture.appID))"."Users""#
                ).count == 1)
        }
    }

    @Test func loginErrorsAndLockoutFollowTheClock() async throws {
        try await Self.with { fixture in
            await fixture.expectError(3003, status: 401) { _ = try await fixture.login("nobody@example.com", "p") }
            let user = try await fixture.register(#"{"email": "bob@example.com", "password": "right"}"#)
            await fixture.expectError(3038) {
                _ = try await fixture.accounts.login(
                    appID: fixture.appID, body: try fixture.body(#"{"login": "bob@example.com"}"#),
                    logger: fixture.logger)
            }
            await fixture.expectError(3006) { _ = try await fixture.login("", "right") }
            await fixture.expectError(3003, status: 401) { _ = try await fixture.login("bob@example.com", "wrong") }
            fixture.clock.advance(901)  // the first failure leaves the window
            for _ in 0..<4 {
                await fixture.expectError(3003) { _ = try await fixture.login("bob@example.com", "wrong") }
            }
            _ = try await fixture.login("bob@example.com", "right")  // 4 failures in the window: not locked, and reset
            for _ in 0..<5 {
                await fixture.expectError(3003) { _ = try await fixture.login("bob@example.com", "wrong") }
            }
            await fixture.expectError(3036) { _ = try await fixture.login("bob@example.com", "right") }
            fixture.clock.advance(899)
            await fixture.expectError(3036) { _ = try await fixture.login("bob@example.com", "right") }
            fixture.clock.advance(2)
            _ = try await fixture.login("bob@example.com", "right")

            let id = try #require(user["objectId"] as? String)
            // userStatus is users-service's (the data engine refuses it, whatever the key).
            _ = try await fixture.accounts.setStatus(
                id: id, body: try fixture.body(#"{"userStatus": "DISABLED"}"#), identity: Self.serverCode(fixture),
                logger: fixture.logger)
            await fixture.expectError(3090) { _ = try await fixture.login("bob@example.com", "right") }
        }
    }

    @Test func sessionsFollowThePolicyAndExpireWhenIdle() async throws {
        try await Self.with { fixture in
            _ = try await fixture.register(#"{"email": "cy@example.com", "password": "p"}"#)
            let first = try #require(try await fixture.login("cy@example.com", "p")["user-token"] as? String)
            let second = try #require(try await fixture.login("cy@example.com", "p")["user-token"] as? String)
            #expect(try await !fixture.accounts.isValid(appID: fixture.appID, token: first, logger: fixture.logger))
            #expect(try await fixture.accounts.isValid(appID: fixture.appID, token: second, logger: fixture.logger))

            try await fixture.setPolicy("max_sessions = 2")
            let third = try #require(try await fixture.login("cy@example.com", "p")["user-token"] as? String)
            #expect(try await fixture.accounts.isValid(appID: fixture.appID, token: second, logger: fixture.logger))
            try await fixture.setPolicy("reject_extra_logins = true")
            await fixture.expectError(3044) { _ = try await fixture.login("cy@example.com", "p") }
            try await fixture.setPolicy("max_sessions = 1")
            await fixture.expectError(3002) { _ = try await fixture.login("cy@example.com", "p") }
            #expect(try await fixture.accounts.isValid(appID: fixture.appID, token: third, logger: fixture.logger))

            try await fixture.setPolicy("session_timeout_seconds = 600")
            fixture.clock.advance(599)
            #expect(try await fixture.accounts.isValid(appID: fixture.appID, token: third, logger: fixture.logger))
            // Resolving the token counts as activity.
            _ = try await fixture.accounts.resolve(appID: fixture.appID, token: third, logger: fixture.logger)
            fixture.clock.advance(599)
            #expect(try await fixture.accounts.isValid(appID: fixture.appID, token: third, logger: fixture.logger))
            fixture.clock.advance(601)
            await fixture.expectError(3064) {
                _ = try await fixture.accounts.resolve(appID: fixture.appID, token: third, logger: fixture.logger)
            }
            _ = try await fixture.login("cy@example.com", "p")  // the expired session no longer blocks a login
        }
    }
}
