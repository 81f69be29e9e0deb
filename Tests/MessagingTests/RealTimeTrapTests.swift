import Foundation
import TestSupport
import Testing

/// The attacker's probe's real-time reproduction: a subscription whose where clause compares a
/// date with a number no timestamp can hold trapped while it compiled, taking messaging-service —
/// every socket, subscription, push and mail of every app — down with it.
@Suite(.timeLimit(.minutes(20))) struct RealTimeTrapTests {
    @Test func aSubscriptionWithAnImpossibleDateIsRefusedAndEverythingElseGoesOn() async throws {
        try await TestCluster.shared { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Person", #"{"name": "seed", "age": 1}"#)
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: cluster.app.keys[.js]!) {
                client in
                let clauses = [
                    "created > 99999999999999999", "created < -99999999999999999", "updated = 1e300",
                    "created > '99999999999999999'",
                ]
                for (index, clause) in clauses.enumerated() {
                    try client.subscribe("T\(index)", "created", "Person", where: clause)
                }
                try client.subscribe("OK", "created", "Person", where: "age > 0")
                try await client.ready(["OK"])
                let ids = clauses.indices.map { "T\($0)" }
                try await client.wait { _ in
                    ids.allSatisfy { (try? client.payloads("SUB_RES", id: $0).isEmpty) == false }
                }
                for id in ids {
                    let error = try client.payloads("SUB_RES", id: id).first?["error"] as? [String: Any]
                    #expect(error?["code"] is Int && error?["message"] is String, "\(id): \(String(describing: error))")
                }
                // Stored dates at either end of the range still compare without trapping.
                try client.subscribe("EDGE", "created", "Person", where: "created > -210866803200000")
                try await client.ready(["EDGE"])
                _ = try await cluster.send(.POST, "/data/Person", #"{"name": "next", "age": 2}"#)
                try await client.wait { _ in
                    (try? client.data("OK").count) == 1 && (try? client.data("EDGE").count) == 1
                }
            }
        }
    }
}
