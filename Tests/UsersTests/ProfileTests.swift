import DataEngine
import Foundation
import InternalProtocol
import TestSupport
import Testing
import UsersService

/// Updating users, their status, password checks, guests, the Users schema and login rate
/// limits, against a real database.
@Suite(.timeLimit(.minutes(20))) struct ProfileTests {
    typealias Fixture = AccountsTests.Fixture

    /// Registers and logs in `email` with password `pw`; the identity its token resolves to.
    static func loggedIn(_ fixture: Fixture, _ email: String) async throws -> (identity: Identity, token: String) {
        _ = try await fixture.register(#"{"email": "\#(email)", "password": "pw"}"#)
        let token = try #require(try await fixture.login(email, "pw")["user-token"] as? String)
        return (try await identity(fixture, token: token), token)
    }

    static func identity(_ fixture: Fixture, token: String) async throws -> Identity {
        let session = try await fixture.accounts.resolve(appID: fixture.appID, token: token, logger: fixture.logger)
        var identity = Identity(appId: fixture.appID, keyKind: .rest, userId: session.userId, roles: session.roles)
        identity.sessionId = session.sessionId
        return identity
    }

    func update(_ fixture: Fixture, _ id: String, _ json: String, as identity: Identity) async throws -> [String: Any] {
        try fixture.decode(
            try await fixture.accounts.updateUser(
                id: id, body: try fixture.body(json), identity: identity, logger: fixture.logger
            ).user)
    }

    @Test func usersUpdateTheirOwnProfileOnly() async throws {
        try await AccountsTests.with { fixture in
            let (ann, _) = try await Self.loggedIn(fixture, "ann@example.com")
            let (bob, _) = try await Self.loggedIn(fixture, "bob@example.com")
            let annID = try #require(ann.userId)
            let updated = try await update(
                fixture, annID,
                #"{"name": "Ann", "userstatus": "DISABLED", "LastLogin": 1, "objectid": "X", "OWNERID": "Y"}"#,
                as: ann)
            #expect(updated["name"] as? String == "Ann" && updated["userStatus"] as? String == "ENABLED")
            #expect(updated["lastLogin"] as? Int == 1_800_000_000_000 && updated["password"] == nil)
            #expect(updated["objectId"] as? String == annID && updated["ownerId"] is NSNull)

            let anonymous = Identity.anonymous(appId: fixture.appID, keyKind: .rest)
            let server = AccountsTests.serverCode(fixture)
            let cases: [(String, String, Identity, Int, Int)] = [
                (annID, #"{"name": "x"}"#, anonymous, 3028, 401),
                (annID, #"{"name": "x"}"#, bob, 3029, 403),
                ("NO-SUCH-USER", #"{"name": "x"}"#, server, 3030, 404),
                (annID, #"{"email": "bob@example.com"}"#, ann, 3018, 409),
                (annID, #"{"Email": "not-an-address"}"#, ann, 3040, 400),
                (annID, #"{"email": ""}"#, ann, 3045, 400),
                (annID, #"{"email": null}"#, ann, 3045, 400),
                (annID, #"{"password": ""}"#, ann, 3045, 400),
                (annID, #"{"password": null}"#, ann, 3045, 400),
                (annID, #"{"password": "\#(String(repeating: "x", count: 73))"}"#, ann, 8000, 400),
            ]
            for (id, json, caller, code, status) in cases {
                await fixture.expectError(code, status: status) { _ = try await update(fixture, id, json, as: caller) }
            }
            _ = try await update(fixture, annID, #"{"nickname": "A"}"#, as: server)
            _ = try await update(fixture, try #require(bob.userId), #"{"nickname": "B"}"#, as: server)
            _ = try await fixture.engine.setDynamicSchema(false, identity: server, logger: fixture.logger)
            await fixture.expectError(3031) { _ = try await update(fixture, annID, #"{"hobby": "chess"}"#, as: ann) }
            _ = try await fixture.engine.alterColumn(
                "Users", column: "nickname", changes: JSONObject([("required", .bool(true))]), identity: server,
                logger: fixture.logger)
            await fixture.expectError(3045) { _ = try await update(fixture, annID, #"{"nickname": null}"#, as: ann) }
        }
    }

    @Test func aNewPasswordEndsTheOtherSessionsAndReplacesTheOldOne() async throws {
        try await AccountsTests.with { fixture in
            try await fixture.setPolicy("max_sessions = 3")
            let (ann, first) = try await Self.loggedIn(fixture, "ann@example.com")
            let second = try #require(try await fixture.login("ann@example.com", "pw")["user-token"] as? String)
            let annID = try #require(ann.userId)
            let changed = try await fixture.accounts.updateUser(
                id: annID, body: try fixture.body(#"{"password": "new-pw"}"#), identity: ann, logger: fixture.logger)
            #expect(changed.endedSessions && !changed.user.contains("new-pw"))
            #expect(try await fixture.accounts.isValid(appID: fixture.appID, token: first, logger: fixture.logger))
            #expect(try await !fixture.accounts.isValid(appID: fixture.appID, token: second, logger: fixture.logger))
            await fixture.expectError(3003) { _ = try await fixture.login("ann@example.com", "pw") }
            _ = try await fixture.login("ann@example.com", "new-pw")
            let hashes = try await fixture.strings("SELECT password_hash FROM users.credentials")
            #expect(hashes.count == 1 && !hashes[0].contains("new-pw"))

            // The server-code key may reset anyone's password, which ends all of their sessions.
            _ = try await fixture.accounts.updateUser(
                id: annID, body: try fixture.body(#"{"password": "reset"}"#),
                identity: AccountsTests.serverCode(fixture),
                logger: fixture.logger)
            #expect(try await !fixture.accounts.isValid(appID: fixture.appID, token: first, logger: fixture.logger))
        }
    }

    @Test func statusDisablesAndEnablesAccounts() async throws {
        try await AccountsTests.with { fixture in
            let (ann, token) = try await Self.loggedIn(fixture, "ann@example.com")
            let annID = try #require(ann.userId)
            let server = AccountsTests.serverCode(fixture)
            func set(_ json: String, as identity: Identity = server, id: String? = nil) async throws {
                _ = try await fixture.accounts.setStatus(
                    id: id ?? annID, body: try fixture.body(json), identity: identity, logger: fixture.logger)
            }
            await fixture.expectError(4000, status: 403) { try await set(#"{"userStatus": "DISABLED"}"#, as: ann) }
            await fixture.expectError(3038) { try await set(#"{}"#) }
            await fixture.expectError(3038) { try await set(#"{"userStatus": "GUEST"}"#) }
            await fixture.expectError(3030, status: 404) {
                try await set(#"{"userStatus": "ENABLED"}"#, id: "NO-SUCH-USER")
            }

            try await set(#"{"userStatus": "DISABLED"}"#)
            #expect(try await !fixture.accounts.isValid(appID: fixture.appID, token: token, logger: fixture.logger))
            await fixture.expectError(3090, status: 401) { _ = try await fixture.login("ann@example.com", "pw") }
            try await set(#"{"userStatus": "EMAIL_CONFIRMATION_PENDING"}"#)
            await fixture.expectError(3000, status: 401) { _ = try await fixture.login("ann@example.com", "pw") }
            try await set(#"{"userStatus": "ENABLED"}"#)
            _ = try await fixture.login("ann@example.com", "pw")
        }
    }

    @Test func verifyPasswordChecksTheCallersPassword() async throws {
        try await AccountsTests.with { fixture in
            let (ann, _) = try await Self.loggedIn(fixture, "ann@example.com")
            func verify(_ json: String, as identity: Identity = ann) async throws -> Bool {
                try await fixture.accounts.verifyPassword(
                    body: try fixture.body(json), identity: identity, logger: fixture.logger)
            }
            #expect(try await verify(#"{"password": "pw"}"#))
            #expect(try await !verify(#"{"password": "wrong"}"#))
            await fixture.expectError(3011) { _ = try await verify(#"{}"#) }
            await fixture.expectError(3028, status: 401) {
                _ = try await verify(#"{"password": "pw"}"#, as: .anonymous(appId: fixture.appID, keyKind: .rest))
            }
        }
    }

    @Test func guestsLogInAtOnceAndRegisterLater() async throws {
        try await AccountsTests.with { fixture in
            let guest = try fixture.decode(
                try await fixture.accounts.registerGuest(appID: fixture.appID, logger: fixture.logger))
            let guestID = try #require(guest["objectId"] as? String)
            let token = try #require(guest["user-token"] as? String)
            #expect(guest["userStatus"] as? String == "GUEST")
            #expect(
                try await fixture.accounts.resolve(appID: fixture.appID, token: token, logger: fixture.logger).userId
                    == guestID)
            #expect(try await fixture.strings("SELECT user_id FROM users.credentials").isEmpty)

            let (ann, _) = try await Self.loggedIn(fixture, "ann@example.com")
            await fixture.expectError(3030) {
                _ = try await fixture.register(
                    #"{"objectId": "\#(ann.userId!)", "email": "x@example.com", "password": "p"}"#, as: ann.userId)
            }
            // Only the guest's own token converts it: objectIds are no secret.
            await fixture.expectError(3029, status: 403) {
                _ = try await fixture.register(
                    #"{"objectId": "\#(guestID)", "email": "thief@example.com", "password": "p"}"#)
            }
            await fixture.expectError(3029) {
                _ = try await fixture.register(
                    #"{"objectId": "\#(guestID)", "email": "thief@example.com", "password": "p"}"#, as: ann.userId)
            }
            // Nor does a guest get a password or an address by updating itself.
            var guestIdentity = Identity(appId: fixture.appID, keyKind: .rest, userId: guestID, roles: [])
            guestIdentity.sessionId = "x"
            for json in [#"{"password": "p"}"#, #"{"EMAIL": "g@example.com"}"#] {
                await fixture.expectError(3024) {
                    _ = try await fixture.accounts.updateUser(
                        id: guestID, body: try fixture.body(json), identity: guestIdentity, logger: fixture.logger)
                }
            }
            let converted = try await fixture.register(
                #"{"objectId": "\#(guestID)", "email": "guest@example.com", "password": "p"}"#, as: guestID)
            #expect(converted["objectId"] as? String == guestID && converted["userStatus"] as? String == "ENABLED")
            #expect(try await fixture.login("guest@example.com", "p")["objectId"] as? String == guestID)
            await fixture.expectError(3030) {
                _ = try await fixture.register(
                    #"{"objectId": "\#(guestID)", "email": "again@example.com", "password": "p"}"#, as: guestID)
            }
            try await fixture.setPolicy("registration_enabled = false")
            await fixture.expectError(3009, status: 403) {
                _ = try await fixture.accounts.registerGuest(appID: fixture.appID, logger: fixture.logger)
            }
        }
    }

    @Test func userClassPropertiesDescribeTheUsersTable() async throws {
        try await AccountsTests.with { fixture in
            let text = try await fixture.accounts.userClassProperties(appID: fixture.appID, logger: fixture.logger)
            let properties = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
            let byName = Dictionary(uniqueKeysWithValues: properties.map { ($0["name"] as? String ?? "", $0) })
            #expect(byName["email"]?["identity"] as? Bool == true && byName["email"]?["type"] as? String == "STRING")
            #expect(byName["name"]?["identity"] as? Bool == false)
            #expect(
                byName["password"]?["required"] as? Bool == true && byName["password"]?["identity"] as? Bool == false)
            #expect(byName["objectId"]?["isPrimaryKey"] as? Bool == true)
            #expect(byName["lastLogin"]?["type"] as? String == "DATETIME")
        }
    }

    @Test func passwordChecksAreRateLimitedPerIdentityAndAddress() async throws {
        try await AccountsTests.with(attemptsPerMinute: (identity: 3, address: 5)) { fixture in
            _ = try await fixture.register(#"{"email": "ann@example.com", "password": "pw"}"#)
            func attempt(_ login: String, from address: String) async throws {
                _ = try await fixture.accounts.login(
                    appID: fixture.appID,
                    body: JSONObject([("login", .string(login)), ("password", .string("wrong"))]),
                    clientAddress: address, logger: fixture.logger)
            }
            for _ in 0..<3 {
                await fixture.expectError(3003) { try await attempt("ann@example.com", from: "10.0.0.1") }
            }
            await fixture.expectError(429, status: 429) { try await attempt("ANN@example.com", from: "10.0.0.2") }
            // The refused attempt spent nothing: the second address still has its full budget.
            for index in 0..<5 {
                await fixture.expectError(3003) { try await attempt("u\(index)@example.com", from: "10.0.0.2") }
            }
            await fixture.expectError(429) { try await attempt("fresh@example.com", from: "10.0.0.2") }
            await fixture.expectError(3003) { try await attempt("fresh@example.com", from: "10.0.0.3") }
        }
    }
}
