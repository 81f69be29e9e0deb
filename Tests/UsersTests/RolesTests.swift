import DataEngine
import Foundation
import InternalProtocol
import PostgresNIO
import TestSupport
import Testing
import UsersService

/// Custom roles: managing them, assigning them, and the roles a token resolves to.
@Suite(.timeLimit(.minutes(20))) struct RolesTests {
    typealias Fixture = AccountsTests.Fixture

    func change(_ fixture: Fixture, assign: Bool, _ json: String, as identity: Identity? = nil) async throws {
        let caller = identity ?? AccountsTests.serverCode(fixture)
        let body = try fixture.body(json)
        if assign {
            _ = try await fixture.accounts.assignRole(body: body, identity: caller, logger: fixture.logger)
        } else {
            _ = try await fixture.accounts.unassignRole(body: body, identity: caller, logger: fixture.logger)
        }
    }

    @Test func customRolesAreManagedWithTheServerCodeKeyOnly() async throws {
        try await AccountsTests.with { fixture in
            let server = AccountsTests.serverCode(fixture)
            let rest = Identity.anonymous(appId: fixture.appID, keyKind: .rest)
            await fixture.expectError(4000, status: 403) {
                _ = try await fixture.accounts.createRole("Editors", identity: rest, logger: fixture.logger)
            }
            #expect(try await fixture.accounts.createRole("Editors", identity: server, logger: fixture.logger))
            #expect(try await !fixture.accounts.createRole("Editors", identity: server, logger: fixture.logger))
            #expect(try await fixture.accounts.createRole("Admins", identity: server, logger: fixture.logger))
            for name in ["AuthenticatedUser", "RestUser", String(repeating: "r", count: 101), "bad\u{7}name"] {
                await fixture.expectError(400) {
                    _ = try await fixture.accounts.createRole(name, identity: server, logger: fixture.logger)
                }
            }
            #expect(
                try await fixture.accounts.customRoles(identity: server, logger: fixture.logger) == [
                    "Admins", "Editors",
                ])
            await fixture.expectError(4000) {
                _ = try await fixture.accounts.customRoles(identity: rest, logger: fixture.logger)
            }
            try await fixture.accounts.deleteRole("Admins", identity: server, logger: fixture.logger)
            await fixture.expectError(2005, status: 404) {
                try await fixture.accounts.deleteRole("Admins", identity: server, logger: fixture.logger)
            }
            #expect(try await fixture.accounts.customRoles(identity: server, logger: fixture.logger) == ["Editors"])
        }
    }

    @Test func assignedRolesTravelWithTheToken() async throws {
        try await AccountsTests.with { fixture in
            let server = AccountsTests.serverCode(fixture)
            _ = try await fixture.accounts.createRole("Editors", identity: server, logger: fixture.logger)
            _ = try await fixture.accounts.createRole("Admins", identity: server, logger: fixture.logger)
            let (ann, token) = try await ProfileTests.loggedIn(fixture, "ann@example.com")
            let annID = try #require(ann.userId)

            try await change(fixture, assign: true, #"{"user": "ann@example.com", "roleName": "Editors"}"#)
            try await change(fixture, assign: true, #"{"user": "\#(annID)", "roleName": "Admins"}"#)
            try await change(fixture, assign: true, #"{"user": "\#(annID)", "roleName": "Admins"}"#)  // idempotent
            let resolved = try await fixture.accounts.resolve(
                appID: fixture.appID, token: token, logger: fixture.logger)
            #expect(resolved.roles == ["Admins", "Editors"])
            #expect(
                try await fixture.accounts.roles(ofUser: annID, identity: server, logger: fixture.logger) == [
                    "Admins", "Editors",
                ])
            await fixture.expectError(4000) {
                _ = try await fixture.accounts.roles(ofUser: annID, identity: ann, logger: fixture.logger)
            }
            await fixture.expectError(3057, status: 404) {
                _ = try await fixture.accounts.roles(ofUser: "nobody", identity: server, logger: fixture.logger)
            }

            let failures: [(Bool, String, Int)] = [
                (true, #"{"roleName": "Editors"}"#, 3038),
                (true, #"{"user": "ann@example.com"}"#, 3038),
                (true, #"{"user": "ann@example.com", "roleName": "Nope"}"#, 2005),
                (true, #"{"user": "nobody@example.com", "roleName": "Editors"}"#, 3057),
                (true, #"{"user": "ann@example.com", "roleName": "AuthenticatedUser"}"#, 3058),
                (false, #"{"user": "ann@example.com", "roleName": "ServerCodeUser"}"#, 3059),
                (false, #"{"user": "ann@example.com", "roleName": "Nope"}"#, 2005),
            ]
            for (assign, json, code) in failures {
                await fixture.expectError(code) { try await change(fixture, assign: assign, json) }
            }
            await fixture.expectError(4000) {
                try await change(fixture, assign: true, #"{"user": "ann@example.com", "roleName": "Editors"}"#, as: ann)
            }

            try await change(fixture, assign: false, #"{"user": "ann@example.com", "roleName": "Editors"}"#)
            await fixture.expectError(3059) {
                try await change(fixture, assign: false, #"{"user": "ann@example.com", "roleName": "Editors"}"#)
            }
            try await fixture.accounts.deleteRole("Admins", identity: server, logger: fixture.logger)
            #expect(
                try await fixture.accounts.resolve(appID: fixture.appID, token: token, logger: fixture.logger).roles
                    .isEmpty)
        }
    }

    @Test func aRolesMembersArePagedAndFiltered() async throws {
        try await AccountsTests.with { fixture in
            let server = AccountsTests.serverCode(fixture)
            _ = try await fixture.accounts.createRole("Team", identity: server, logger: fixture.logger)
            _ = try await fixture.accounts.createRole("Other", identity: server, logger: fixture.logger)
            for index in 0..<5 {
                _ = try await fixture.register(
                    #"{"email": "u\#(index)@example.com", "password": "p", "rank": \#(index)}"#)
                if index < 4 {
                    try await change(fixture, assign: true, #"{"user": "u\#(index)@example.com", "roleName": "Team"}"#)
                }
            }
            try await change(fixture, assign: true, #"{"user": "u0@example.com", "roleName": "Other"}"#)
            func members(_ role: String, _ items: [(String, String)], loadRoles: Bool = false) async throws -> [[String:
                Any]]
            {
                let query = try FindQuery(QueryParameters(queryItems: items))
                let text = try await fixture.accounts.users(
                    inRole: role, query: query, loadRoles: loadRoles, identity: server, logger: fixture.logger)
                return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
            }
            let page = try await members("Team", [("where", "rank >= 1"), ("sortBy", "rank desc"), ("pageSize", "2")])
            #expect(page.map { $0["rank"] as? Int } == [3, 2])
            let withRoles = try await members("Team", [("where", "rank = 0")], loadRoles: true)
            #expect(withRoles.count == 1 && withRoles[0]["roles"] as? [String] == ["Other", "Team"])
            #expect(try await members("Team", []).count == 4)
            await fixture.expectError(2005) { _ = try await members("Nope", []) }
            await fixture.expectError(2005) { _ = try await members("AuthenticatedUser", []) }
        }
    }
}

/// Users keep logging in when an app hides its `Users` table from every role.
@Suite(.timeLimit(.minutes(20))) struct UsersUnderPermissionsTests {
    @Test func loginsWorkWhenUsersIsHiddenFromEveryRole() async throws {
        try await AccountsTests.with { fixture in
            _ = try await fixture.register(#"{"email": "ann@example.com", "password": "pw"}"#)
            for operation in ["Find", "Update"] {
                _ = try await fixture.database.query(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO data.permissions (app_id, table_name, principal_kind, principal, operation, decision)
                            VALUES ('\(fixture.appID)', 'users', 'role', '*', '\(operation)', 'DENY')
                            """), logger: fixture.logger
                ).collect()
            }
            await fixture.engine.cache.invalidateAll()
            let session = try await fixture.login("ann@example.com", "pw")
            #expect(session["user-token"] is String)
            // The public server-code key is subject to the rules: no row could be visible, so 1023.
            await fixture.expectError(1023) {
                _ = try await fixture.engine.count(
                    "Users", query: FindQuery(), identity: .anonymous(appId: fixture.appID, keyKind: .serverCode),
                    logger: fixture.logger)
            }
        }
    }
}
