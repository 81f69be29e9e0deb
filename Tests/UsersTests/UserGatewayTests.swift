import Foundation
import InternalProtocol
import NIOHTTP1
import PostgresNIO
import PostgresSupport
import TestSupport
import Testing

/// The users API through the gateway: cached identities and their invalidation, roles,
/// profile operations and per-address login limits.
@Suite(.timeLimit(.minutes(20))) struct UserGatewayTests {
    /// Registers `email` (password `pw`) and logs in: the user's id and token.
    private func loggedIn(_ cluster: TestCluster, _ email: String) async throws -> (String, String) {
        let user = try await cluster.send(.POST, "/users/register", #"{"email": "\#(email)", "password": "pw"}"#)
        let id = try #require(user.json["objectId"] as? String, "\(user.text)")
        let login = try await cluster.send(.POST, "/users/login", #"{"login": "\#(email)", "password": "pw"}"#)
        return (id, try #require(login.json["user-token"] as? String, "\(login.text)"))
    }

    /// Waits (up to 30 s, a bound on a hang) for `token` to be refused by the gateway.
    private func eventuallyRefused(_ cluster: TestCluster, _ token: String) async throws -> Bool {
        for _ in 0..<600 {
            if try await cluster.send(.GET, "/users/userroles", token: token).json["code"] as? Int == 3064 {
                return true
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    private func sql(_ cluster: TestCluster, _ statement: String) async throws {
        try await PostgresClient.with(cluster.database, logger: TestDatabase.logger) { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: statement), logger: TestDatabase.logger).collect()
        }
    }

    @Test func resolvedTokensAreCachedUntilTheirUserIsAnnounced() async throws {
        try await TestCluster.with { cluster async throws in
            let (userID, token) = try await loggedIn(cluster, "ann@example.com")
            #expect(try await cluster.send(.GET, "/users/userroles", token: token).status == 200)
            // Removed behind users-service's back, the session still resolves from the cache...
            try await sql(cluster, "DELETE FROM users.sessions")
            let cached = try await cluster.send(.GET, "/users/userroles", token: token)
            #expect(cached.status == 200, "\(cached.text)")
            // ...until the user is announced, as users-service does on every session change.
            try await sql(cluster, "SELECT pg_notify('\(SessionsChannel.name)', '\(cluster.app.id) \(userID)')")
            #expect(try await eventuallyRefused(cluster, token))
        }
    }

    @Test func aSecondLoginEndsTheFirstTokenOnTheGateway() async throws {
        try await TestCluster.with { cluster async throws in
            let (_, first) = try await loggedIn(cluster, "ann@example.com")
            #expect(try await cluster.send(.GET, "/users/userroles", token: first).status == 200)
            let second = try await cluster.send(
                .POST, "/users/login", #"{"login": "ann@example.com", "password": "pw"}"#)
            #expect(second.json["user-token"] is String)
            #expect(try await eventuallyRefused(cluster, first))
        }
    }

    @Test func rolesAreManagedAndVisibleAtOnce() async throws {
        try await TestCluster.with { cluster async throws in
            let (userID, token) = try await loggedIn(cluster, "ann@example.com")
            let anonymous = try await cluster.send(.GET, "/users/userroles")
            #expect(anonymous.text == #"["NotAuthenticatedUser","RestUser"]"#)
            #expect(
                try await cluster.send(.GET, "/users/userroles", token: token).text
                    == #"["AuthenticatedUser","RestUser"]"#)

            let denied = try await cluster.send(.PUT, "/users/roles/Editors")
            #expect(denied.status == 403 && denied.json["code"] as? Int == 4000)
            #expect(try await cluster.send(.PUT, "/users/roles/Editors", key: .serverCode).status == 201)
            #expect(try await cluster.send(.PUT, "/users/roles/Editors", key: .serverCode).status == 200)
            #expect(try await cluster.send(.GET, "/users/roles", key: .serverCode).text == #"["Editors"]"#)
            let assigned = try await cluster.send(
                .POST, "/users/assignRole", #"{"user": "ann@example.com", "roleName": "Editors"}"#, key: .serverCode)
            #expect(assigned.status == 200, "\(assigned.text)")
            let roles = try await cluster.send(.GET, "/users/userroles", token: token)
            #expect(roles.text == #"["AuthenticatedUser","RestUser","Editors"]"#)
            #expect(
                try await cluster.send(.GET, "/users/userroles/\(userID)", key: .serverCode).text == #"["Editors"]"#)
            // Members are users: an anonymous caller may not find them (the Users table's default).
            let hidden = try await cluster.send(.GET, "/users/role/Editors?loadRoles=true&props=email")
            #expect(hidden.status == 403 && !hidden.text.contains("ann@example.com"), "\(hidden.text)")
            let members = try await cluster.send(.GET, "/users/role/Editors?loadRoles=true&props=email", token: token)
            #expect(
                members.text.contains(#""email":"ann@example.com""#) && members.text.contains(#""roles":["Editors"]"#))
            let missing = try await cluster.send(.GET, "/users/role/Nope")
            #expect(missing.status == 404 && missing.json["code"] as? Int == 2005)

            #expect(try await cluster.send(.DELETE, "/users/roles/Editors", key: .serverCode).status == 200)
            // A deleted role reaches cached identities through the announcement of each former member.
            var dropped = false
            for _ in 0..<600 where !dropped {
                dropped =
                    try await cluster.send(.GET, "/users/userroles", token: token).text
                    == #"["AuthenticatedUser","RestUser"]"#
                if !dropped { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(dropped)
        }
    }

    @Test func profileOperationsUseTheSeedCodesAndStatuses() async throws {
        try await TestCluster.with { cluster async throws in
            let (userID, token) = try await loggedIn(cluster, "ann@example.com")
            let updated = try await cluster.send(.PUT, "/users/\(userID)", #"{"name": "Ann"}"#, token: token)
            #expect(
                updated.status == 200 && updated.json["name"] as? String == "Ann" && updated.json["password"] == nil)
            let anonymous = try await cluster.send(.PUT, "/users/\(userID)", #"{"name": "X"}"#)
            #expect(anonymous.status == 401 && anonymous.json["code"] as? Int == 3028)
            #expect(
                try await cluster.send(.POST, "/users/verifypassowrd", #"{"password": "pw"}"#, token: token).text
                    == #"{"valid":true}"#)
            #expect(
                try await cluster.send(.POST, "/users/verifypassowrd", #"{"password": "no"}"#, token: token).text
                    == #"{"valid":false}"#)
            let properties = try await cluster.send(.GET, "/users/userclassprops")
            #expect(properties.status == 200 && properties.text.contains(#""name":"password""#))

            let guest = try await cluster.send(.POST, "/users/register/guest")
            #expect(guest.json["userStatus"] as? String == "GUEST" && guest.json["user-token"] is String)

            let refused = try await cluster.send(
                .PUT, "/users/\(userID)/status", #"{"userStatus": "DISABLED"}"#, token: token)
            #expect(refused.status == 403 && refused.json["code"] as? Int == 4000)
            let disabled = try await cluster.send(
                .PUT, "/users/\(userID)/status", #"{"userStatus": "DISABLED"}"#, key: .serverCode)
            #expect(disabled.status == 200, "\(disabled.text)")
            #expect(try await eventuallyRefused(cluster, token))
            let login = try await cluster.send(
                .POST, "/users/login", #"{"login": "ann@example.com", "password": "pw"}"#)
            #expect(login.status == 401 && login.json["code"] as? Int == 3090)
        }
    }

    @Test func savingUsersThroughTheDataAPIHashesPasswords() async throws {
        try await TestCluster.with { cluster async throws in
            let created = try await cluster.send(
                .POST, "/data/Users", #"{"email": "dee@example.com", "password": "first1", "name": "Dee"}"#)
            #expect(created.status == 200 && created.json["password"] == nil, "\(created.text)")
            let id = try #require(created.json["objectId"] as? String)
            let login = try await cluster.send(
                .POST, "/users/login", #"{"login": "dee@example.com", "password": "first1"}"#)
            let token = try #require(login.json["user-token"] as? String, "\(login.text)")
            let read = try await cluster.send(.GET, "/data/Users/\(id)", token: token)
            #expect(read.json["name"] as? String == "Dee" && read.json["password"] == nil)

            // An update re-hashes (the SDKs' PUT /data/Users with the id in the body, and PUT …/{id}).
            let saved = try await cluster.send(
                .PUT, "/data/Users", #"{"objectId": "\#(id)", "password": "second2"}"#, key: .serverCode)
            #expect(
                saved.status == 200 && saved.json["password"] == nil && saved.json["name"] as? String == "Dee",
                "\(saved.text)")
            #expect(
                try await eventuallyRefused(cluster, token), "a new password set with the server key ends every session"
            )
            let old = try await cluster.send(
                .POST, "/users/login", #"{"login": "dee@example.com", "password": "first1"}"#)
            #expect(old.json["code"] as? Int == 3003)
            let relogin = try await cluster.send(
                .POST, "/users/login", #"{"login": "dee@example.com", "password": "second2"}"#)
            let second = try #require(relogin.json["user-token"] as? String, "\(relogin.text)")
            let byId = try await cluster.send(
                .PUT, "/data/Users/\(id)", #"{"password": "third3", "name": "D"}"#, token: second)
            #expect(byId.status == 200 && byId.json["name"] as? String == "D", "\(byId.text)")
            let third = try await cluster.send(
                .POST, "/users/login", #"{"login": "dee@example.com", "password": "third3"}"#)
            #expect(third.json["user-token"] is String, "\(third.text)")

            // Only the user itself (or the server-code key) may. A bulk create registers each user
            // (UsersThroughDataAPITests); a bulk upsert never carries passwords.
            let (_, other) = try await loggedIn(cluster, "eve@example.com")
            let refused = try await cluster.send(.PUT, "/data/Users/\(id)", #"{"password": "stolen"}"#, token: other)
            #expect((400..<500).contains(refused.status), "\(refused.text)")
            let bulk = try await cluster.send(
                .PUT, "/data/bulkupsert/Users", #"[{"email": "f@example.com", "password": "x"}]"#, key: .serverCode)
            #expect(bulk.json["code"] as? Int == 1022, "\(bulk.text)")
            let duplicate = try await cluster.send(
                .POST, "/data/Users", #"{"email": "dee@example.com", "password": "x"}"#)
            #expect(duplicate.json["code"] as? Int == 3033, "\(duplicate.text)")
        }
    }

    @Test func loginsAreLimitedPerClientAddress() async throws {
        // Two attempts an hour: no busy machine refills one between the three calls.
        let environment = [
            "BAAS_USERS_LOGIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE": "2", "BAAS_USERS_LOGIN_ATTEMPTS_WINDOW_SECONDS": "3600",
        ]
        try await TestCluster.with(environment: environment) { cluster async throws in
            for index in 0..<2 {
                let wrong = try await cluster.send(
                    .POST, "/users/login", #"{"login": "u\#(index)@example.com", "password": "p"}"#)
                #expect(wrong.json["code"] as? Int == 3003)
            }
            let limited = try await cluster.send(
                .POST, "/users/login", #"{"login": "u9@example.com", "password": "p"}"#)
            #expect(limited.status == 429 && limited.json["code"] as? Int == 429, "\(limited.text)")
        }
    }
}
