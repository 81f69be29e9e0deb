import Foundation
import TestSupport
import Testing

/// A live real-time subscription keeps only what its user may still receive: a logout, a
/// disabled or deleted user, a new password or a role taken away ends, with a refusal, every
/// subscription the connection may no longer hold, on tables and on channels alike (the second
/// probe's F2: the check was made only when the subscription began).
@Suite(.timeLimit(.minutes(20))) struct RealTimeRevocationTests {
    /// The roles a user of the JS key holds without a custom role, all denied below.
    static let systemRoles = ["NotAuthenticatedUser", "AuthenticatedUser", "RestUser", "JSUser"]

    /// One way a user loses the right: a name, and the call that takes it.
    typealias Revocation = (
        name: String, revoke: @Sendable (TestCluster, (id: String, token: String)) async throws -> HTTPResult
    )

    static let revocations: [Revocation] = [
        ("logout", { cluster, user in try await cluster.send(.GET, "/users/logout", token: user.token) }),
        (
            "disable",
            { cluster, user in
                try await cluster.send(
                    .PUT, "/users/\(user.id)/status", #"{"userStatus": "DISABLED"}"#, key: .serverCode)
            }
        ),
        ("delete", { cluster, user in try await cluster.send(.DELETE, "/data/Users/\(user.id)", key: .serverCode) }),
        (
            "password",
            { cluster, user in
                try await cluster.send(.PUT, "/users/\(user.id)", #"{"password": "NewPassw0rd!!"}"#, key: .serverCode)
            }
        ),
        (
            "unassign",
            { cluster, user in
                try await cluster.send(
                    .POST, "/users/unassignRole", #"{"user": "\#(user.id)", "roleName": "vip"}"#, key: .serverCode)
            }
        ),
    ]

    /// Table `RoleT` and channel `vipchan` only for role `vip`; `Public` for anyone.
    private static func restrict(_ cluster: TestCluster) async throws {
        for table in ["RoleT", "Public"] {
            #expect(
                try await cluster.send(.POST, "/data/\(table)", #"{"title": "first"}"#, key: .serverCode).status == 200)
        }
        #expect((200..<300).contains(try await cluster.send(.PUT, "/users/roles/vip", key: .serverCode).status))
        for role in systemRoles {
            let table = try await cluster.send(
                .PUT, "/data/RoleT/permissions/DENY", #"{"permission": "FIND", "role": "\#(role)"}"#, key: .serverCode)
            #expect(table.status == 200, "\(table.text)")
            let channel = try await cluster.send(
                .PUT, "/messaging/channels/vipchan/permissions/DENY",
                #"{"permission": "SUBSCRIBE", "role": "\#(role)"}"#,
                key: .serverCode)
            #expect(channel.status == 200, "\(channel.text)")
        }
        let table = try await cluster.send(
            .PUT, "/data/RoleT/permissions/GRANT", #"{"permission": "FIND", "role": "vip"}"#, key: .serverCode)
        #expect(table.status == 200, "\(table.text)")
        let channel = try await cluster.send(
            .PUT, "/messaging/channels/vipchan/permissions/GRANT", #"{"permission": "SUBSCRIBE", "role": "vip"}"#,
            key: .serverCode)
        #expect(channel.status == 200, "\(channel.text)")
    }

    /// A vip's account.
    private static func vip(_ cluster: TestCluster, _ name: String) async throws -> (id: String, token: String) {
        let user = try await cluster.account("\(name)@example.com")
        let assigned = try await cluster.send(
            .POST, "/users/assignRole", #"{"user": "\#(user.id)", "roleName": "vip"}"#, key: .serverCode)
        #expect(assigned.status == 200, "\(assigned.text)")
        return user
    }

    /// Connects one client per token (nested, so that every one is ended however `body` ends).
    private static func withClients(
        _ cluster: TestCluster, _ tokens: ArraySlice<String>, connected: [RTClient] = [],
        _ body: ([RTClient]) async throws -> Void
    ) async throws {
        guard let token = tokens.first else { return try await body(connected) }
        try await RTClient.with(
            gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: cluster.app.keys[.js]!, token: token
        ) { client in
            try await withClients(cluster, tokens.dropFirst(), connected: connected + [client], body)
        }
    }

    @Test func liveSubscriptionsEndWhenTheirUserLosesTheRight() async throws {
        try await TestCluster.shared { cluster async throws in
            try await Self.restrict(cluster)
            let keeper = try await Self.vip(cluster, "keeper")
            var users: [(id: String, token: String)] = []
            for revocation in Self.revocations { users.append(try await Self.vip(cluster, revocation.name)) }

            try await Self.withClients(cluster, ArraySlice([keeper.token] + users.map(\.token))) { clients in
                for client in clients {
                    try client.subscribe("D", "created", "RoleT")
                    try client.subscribe("P", "created", "Public")
                    try client.emit(
                        "SUB_ON", #"{"id": "M", "name": "PUB_SUB_MESSAGES", "options": {"channel": "vipchan"}}"#)
                    try await client.ready(["D", "P", "M"])
                }
                for (revocation, user) in zip(Self.revocations, users) {
                    let answer = try await revocation.revoke(cluster, user)
                    #expect(answer.status == 200, "\(revocation.name): \(answer.text)")
                }
                // Each revoked connection is told that its protected subscriptions ended.
                for (revocation, client) in zip(Self.revocations, clients.dropFirst()) {
                    try await client.wait { _ in
                        ["D", "M"].allSatisfy { id in
                            (try? client.payloads("SUB_RES", id: id).contains { $0["error"] != nil }) == true
                        }
                    }
                    let refusal = try client.payloads("SUB_RES", id: "D").compactMap { $0["error"] as? [String: Any] }
                        .first
                    #expect(refusal?["code"] as? Int == 1023, "\(revocation.name): \(String(describing: refusal))")
                }

                _ = try await cluster.send(.POST, "/data/RoleT", #"{"title": "secret after revoke"}"#, key: .serverCode)
                let published = try await cluster.send(
                    .POST, "/messaging/vipchan", #"{"message": "vip secret after revoke"}"#, key: .serverCode)
                #expect(published.status == 200, "\(published.text)")
                _ = try await cluster.send(.POST, "/data/Public", #"{"title": "marker"}"#, key: .serverCode)

                let keeping = clients[0]
                try await keeping.wait { _ in
                    (try? keeping.data("D").count) == 1 && (try? keeping.data("M").count) == 1
                        && (try? keeping.data("P").count) == 1
                }
                // Events reach a connection in commit order: once the marker written last has
                // arrived, the connection has had everything it was going to get.
                for (revocation, client) in zip(Self.revocations, clients.dropFirst()) {
                    try await client.wait { _ in (try? client.data("P").count) == 1 }
                    let leaked = try client.events().filter { "\($0.data ?? "")".contains("secret") }
                    #expect(leaked.isEmpty, "\(revocation.name): \(leaked)")
                }
            }
        }
    }
}
