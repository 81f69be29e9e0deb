import Foundation
import PostgresNIO
import PostgresSupport
import TestSupport
import Testing

/// A client whose connection drops and that comes back with the same `clientId` and the same
/// subscription ids within the resume window receives the data change events it missed, in
/// commit order, once; past the window, or as another user, it starts afresh.
@Suite(.timeLimit(.minutes(20))) struct RealTimeResumeTests {
    @Test func aClientBackWithinTheWindowReceivesWhatItMissedOnce() async throws {
        try await TestCluster.with(environment: ["BAAS_RT_RESUME_WINDOW_MS": "300000"]) { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Item", #"{"n": 0}"#)
            let bob = try await cluster.account("bob@example.com")
            let clientID = UUID().uuidString
            let key = cluster.app.keys[.js]!
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key, clientID: clientID) {
                first in
                try first.subscribe("S", "created", "Item", where: "n > 0")
                try await first.ready(["S"])
                for n in 1...3 { _ = try await cluster.send(.POST, "/data/Item", #"{"n": \#(n)}"#) }
                try await first.wait { _ in (try? first.integers("S", "n").count) == 3 }
                await first.kill()
            }
            // The gateway and messaging-service see the socket dropped and keep where it stood.
            try await Self.waitForResumePoints(cluster, clientID: clientID, count: 1)
            for n in 4...6 { _ = try await cluster.send(.POST, "/data/Item", #"{"n": \#(n)}"#) }

            // Another user with the same client id does not receive what was kept for this one.
            try await RTClient.with(
                gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key, token: bob.token, clientID: clientID
            ) { stranger in
                try stranger.subscribe("S", "created", "Item", where: "n > 0")
                try await stranger.ready(["S"])
                _ = try await cluster.send(.POST, "/data/Item", #"{"n": 100}"#)
                try await stranger.wait { _ in (try? stranger.integers("S", "n")) == [100] }
                try stranger.emit("SUB_OFF", #"{"id": "S"}"#)
            }
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key, clientID: clientID) {
                second in
                try second.subscribe("S", "created", "Item", where: "n > 0")
                try second.subscribe("T", "created", "Item")
                try await second.ready(["S", "T"])
                for n in 7...8 { _ = try await cluster.send(.POST, "/data/Item", #"{"n": \#(n)}"#) }
                try await second.wait { _ in (try? second.integers("S", "n").last) == 8 }
                // Events of one table reach a connection in commit order: a duplicate would come before 8.
                #expect(
                    try second.integers("S", "n") == [4, 5, 6, 100, 7, 8],
                    "the missed events first, each once, then the live ones")
                #expect(try second.integers("T", "n") == [7, 8], "a subscription new to this client starts now")
            }
        }
    }

    @Test func channelMessagesMissedWithinTheWindowArriveOnceAfterAReconnect() async throws {
        try await TestCluster.with(environment: ["BAAS_RT_RESUME_WINDOW_MS": "300000"]) { cluster async throws in
            let clientID = UUID().uuidString
            let key = cluster.app.keys[.js]!
            func publish(_ n: Int, _ priority: Int) async throws {
                let body = #"{"message": \#(n), "headers": {"priority": "\#(priority)"}}"#
                #expect(try await cluster.send(.POST, "/messaging/news", body).status == 200)
            }
            func numbers(_ client: RTClient, _ id: String) throws -> [Int] {
                try client.payloads("SUB_RES", id: id).compactMap { ($0["data"] as? [String: Any])?["message"] as? Int }
            }
            let subscribe =
                #"{"id": "N", "name": "PUB_SUB_MESSAGES", "options": {"channel": "news", "selector": "priority > 1"}}"#
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key, clientID: clientID) {
                first in
                try first.emit("SUB_ON", subscribe)
                try await first.ready(["N"])
                for n in 1...3 { try await publish(n, 5) }
                try await first.wait { _ in (try? numbers(first, "N")) == [1, 2, 3] }
                await first.kill()
            }
            try await Self.waitForResumePoints(cluster, clientID: clientID, count: 1)
            try await publish(4, 5)
            try await publish(5, 0)
            try await publish(6, 5)
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key, clientID: clientID) {
                second in
                try second.emit("SUB_ON", subscribe)
                try await second.ready(["N"])
                try await publish(7, 5)
                try await second.wait { _ in (try? numbers(second, "N").last) == 7 }
                #expect(
                    try numbers(second, "N") == [4, 6, 7],
                    "the missed messages its selector admits, once, then the live ones")
            }
        }
    }

    @Test func pastTheWindowAClientStartsAfresh() async throws {
        try await TestCluster.with(environment: ["BAAS_RT_RESUME_WINDOW_MS": "500"]) { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Item", #"{"n": 0}"#)
            let clientID = UUID().uuidString
            let key = cluster.app.keys[.js]!
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key, clientID: clientID) {
                first in
                try first.subscribe("S", "created", "Item")
                try await first.ready(["S"])
                await first.kill()
            }
            try await Self.waitForResumePoints(cluster, clientID: clientID, count: 1)
            _ = try await cluster.send(.POST, "/data/Item", #"{"n": 1}"#)
            // The point expires half a second after it was kept (the database's clock decides).
            try await Task.sleep(for: .seconds(2))
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key, clientID: clientID) {
                second in
                try second.subscribe("S", "created", "Item")
                try await second.ready(["S"])
                _ = try await cluster.send(.POST, "/data/Item", #"{"n": 2}"#)
                try await second.wait { _ in (try? second.integers("S", "n").last) == 2 }
                #expect(try second.integers("S", "n") == [2])
            }
        }
    }

    /// Waits until `count` resume points are kept for `clientID`.
    static func waitForResumePoints(_ cluster: TestCluster, clientID: String, count: Int) async throws {
        try await PostgresClient.with(cluster.database, logger: TestDatabase.logger) { database in
            for _ in 0..<3_000 {
                let rows = try await database.query(
                    "SELECT count(*) FROM messaging.rt_resume WHERE client_id = \(clientID)",
                    logger: TestDatabase.logger)
                if try await rows.decode(Int64.self).reduce(0, +) >= count { return }
                try await Task.sleep(for: .milliseconds(20))
            }
            Issue.record("no resume point was kept for \(clientID)")
        }
    }
}
