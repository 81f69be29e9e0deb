import DataEngine
import Foundation
import InternalProtocol
import PostgresNIO
import TestSupport
import Testing
import UsersService

/// The seed's general user-service codes where they arise here: 3001 (a login whose settings
/// name an identity property `Users` has no column for), 3021 (a registration the data engine
/// refuses for a reason without a code of its own) and 3023 (a logout the session store cannot
/// carry out). docs/ERRORS.md says why 3007 never arises and why a disabled account stays 3090.
@Suite(.timeLimit(.minutes(20))) struct UserErrorCodesTests {
    typealias Fixture = AccountsTests.Fixture

    /// The seed's wording of the three codes, which every message starts with.
    static let missingSettings = "Missing login settings, possibly invalid application id or version."
    static let registrationFailed = "General user registration error."
    static let logoutFailed = "General error while executing logout."

    /// Runs `body`, which must fail with `code` and `status`, a message that starts with the
    /// seed's `wording`, goes on with `detail` (when given) and quotes no database text.
    func expectCode(
        _ code: Int, status: Int, wording: String, detail: String? = nil, _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("expected \(code)")
        } catch let error as ErrorEnvelope {
            #expect(error.code == code && error.status == status, "\(error)")
            #expect(error.message.hasPrefix(wording), "\(error)")
            if let detail { #expect(error.message.contains(detail), "\(error)") }
            #expect(
                !error.message.contains("relation \"") && !error.message.contains("duplicate key")
                    && !error.message.contains("users.sessions"), "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// Runs a statement the test writes.
    func sql(_ fixture: Fixture, _ statement: String) async throws {
        _ = try await fixture.database.query(PostgresQuery(unsafeSQL: statement), logger: fixture.logger).collect()
    }

    @Test func aLoginWhoseIdentityColumnIsGoneIs3001UntilTheSettingsNameOne() async throws {
        try await AccountsTests.with { fixture in
            _ = try await fixture.register(#"{"email": "ann@example.com", "password": "pw", "nick": "ann"}"#)
            #expect(try await fixture.login("ann@example.com", "pw")["user-token"] is String)
            try await fixture.engine.dropColumn(
                "Users", column: "email", identity: AccountsTests.serverCode(fixture), logger: fixture.logger)
            await expectCode(3001, status: 409, wording: Self.missingSettings, detail: "'email'") {
                _ = try await fixture.login("ann@example.com", "pw")
            }
            // A look-up by identity finds nobody instead of failing with a data-service code.
            await fixture.expectError(3020, status: 404) {
                try await fixture.accounts.restorePassword(
                    appID: fixture.appID, identity: "ann@example.com", clientAddress: nil, logger: fixture.logger)
            }
            // Settings naming a column that exists make logins work again.
            try await fixture.setPolicy("identity_property = 'nick'")
            #expect(try await fixture.login("ann", "pw")["user-token"] is String)
        }
    }

    @Test func registrationsTheEngineRefusesWithoutACodeOfTheirOwnAre3021() async throws {
        try await AccountsTests.with { fixture in
            _ = try await fixture.engine.addColumns(
                "Users", columns: [ColumnSchema(name: "phone", type: .string, unique: true)],
                identity: AccountsTests.serverCode(fixture), logger: fixture.logger)
            _ = try await fixture.register(#"{"email": "ann@example.com", "password": "pw", "phone": "555", "age": 3}"#)
            let cases: [(json: String, status: Int, detail: String)] = [
                // Another unique column than the identity: not 3033.
                (#"{"email": "bob@example.com", "password": "pw", "phone": "555"}"#, 409, "unique"),
                // A value the column cannot hold.
                (#"{"email": "bob@example.com", "password": "pw", "age": "three"}"#, 400, "age"),
                // A property name that cannot be a column.
                (#"{"email": "bob@example.com", "password": "pw", "my-prop": 1}"#, 400, "my-prop"),
            ]
            for (json, status, detail) in cases {
                await expectCode(3021, status: status, wording: Self.registrationFailed, detail: detail) {
                    _ = try await fixture.register(json)
                }
            }
            // The identity itself stays 3033, whatever else the row holds.
            await fixture.expectError(3033, status: 409) {
                _ = try await fixture.register(#"{"email": "ann@example.com", "password": "pw", "phone": "556"}"#)
            }
            _ = try await fixture.register(#"{"email": "bob@example.com", "password": "pw", "phone": "556"}"#)
            #expect(try await fixture.strings("SELECT user_id FROM users.credentials").count == 2)
        }
    }

    @Test func bulkRegistrationsNameTheirRefusalsAsSingleOnesDo() async throws {
        try await AccountsTests.with { fixture in
            _ = try await fixture.engine.addColumns(
                "Users", columns: [ColumnSchema(name: "phone", type: .string, unique: true)],
                identity: AccountsTests.serverCode(fixture), logger: fixture.logger)
            func registerMany(_ jsons: [String]) async throws {
                _ = try await fixture.accounts.registerMany(
                    appID: fixture.appID, bodies: try jsons.map(fixture.body), logger: fixture.logger)
            }
            await expectCode(3021, status: 409, wording: Self.registrationFailed, detail: "unique") {
                try await registerMany([
                    #"{"email": "dee@example.com", "password": "pw", "phone": "777"}"#,
                    #"{"email": "eve@example.com", "password": "pw", "phone": "777"}"#,
                ])
            }
            await fixture.expectError(3033, status: 409) {
                try await registerMany([
                    #"{"email": "fay@example.com", "password": "pw", "phone": "1"}"#,
                    #"{"email": "fay@example.com", "password": "pw", "phone": "2"}"#,
                ])
            }
            try await registerMany([
                #"{"email": "dee@example.com", "password": "pw", "phone": "777"}"#,
                #"{"email": "eve@example.com", "password": "pw", "phone": "778"}"#,
            ])
            #expect(try await fixture.strings("SELECT user_id FROM users.credentials").count == 2)
        }
    }

    @Test func aGuestRegistrationMissingARequiredPropertyIs3012() async throws {
        try await AccountsTests.with { fixture in
            _ = try await fixture.engine.addColumns(
                "Users", columns: [ColumnSchema(name: "nickname", type: .string, required: true)],
                identity: AccountsTests.serverCode(fixture), logger: fixture.logger)
            await fixture.expectError(3012, status: 400) {
                _ = try await fixture.accounts.registerGuest(appID: fixture.appID, logger: fixture.logger)
            }
        }
    }

    @Test func aLogoutTheSessionStoreCannotCarryOutIs3023() async throws {
        try await AccountsTests.with { fixture in
            let (ann, token) = try await ProfileTests.loggedIn(fixture, "ann@example.com")
            try await sql(fixture, "ALTER TABLE users.sessions RENAME TO sessions_away")
            await expectCode(3023, status: 500, wording: Self.logoutFailed) {
                try await fixture.accounts.logout(ann, logger: fixture.logger)
            }
            try await sql(fixture, "ALTER TABLE users.sessions_away RENAME TO sessions")
            #expect(try await fixture.accounts.isValid(appID: fixture.appID, token: token, logger: fixture.logger))
            try await fixture.accounts.logout(ann, logger: fixture.logger)
            #expect(try await !fixture.accounts.isValid(appID: fixture.appID, token: token, logger: fixture.logger))
            await fixture.expectError(3064, status: 401) {
                try await fixture.accounts.logout(ann, logger: fixture.logger)
            }
        }
    }
}
