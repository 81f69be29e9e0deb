import DataEngine
import Foundation
import InternalProtocol
import TestSupport
import Testing

@testable import MessagingService

/// Where clauses and selectors matched in memory cost bounded work per event: a LIKE pattern over
/// the where language's limits is refused at `SUB_ON` (1018, as a find with it is), and the
/// costliest pattern the limits allow, on an 80 KB write, neither holds back another
/// subscriber's event nor answers differently from the database where it decides.
@Suite(.timeLimit(.minutes(20))) struct RealTimeBudgetTests {
    /// 32 `%`s and 1,024 characters, each segment 31 long: on 80,000 `a`s the greedy search would
    /// compare 31 characters at every place.
    static let costliest = String(repeating: "%" + String(repeating: "a", count: 30) + "b", count: 32)
    static let widest = String(repeating: "%a", count: 32)
    static let overLimit = "t LIKE '" + String(repeating: "%a", count: 100) + "'"

    /// Clauses over one object share what the object earns, a connection's many clauses as much
    /// as another connection's one: fifty wide patterns on one connection cannot decide an 80 KB
    /// object within their shares, the same pattern on another connection does (each of the
    /// fifty used to earn the object's whole budget: the second probe's F3).
    @Test func aConnectionsManyClausesTakeNoMoreThanAnothersOne() async throws {
        try await TestCluster.shared { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Wide", #"{"t": "seed"}"#)
            let key = cluster.app.keys[.js]!
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key) { many in
                try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key) { one in
                    let ids = (0..<50).map { "W\($0)" }
                    for id in ids { try many.subscribe(id, "created", "Wide", where: "t LIKE '\(Self.widest)'") }
                    try many.subscribe("LAST", "created", "Wide", where: "t = 'last'")
                    try one.subscribe("W", "created", "Wide", where: "t LIKE '\(Self.widest)'")
                    try one.subscribe("LAST", "created", "Wide", where: "t = 'last'")
                    try await many.ready(ids + ["LAST"])
                    try await one.ready(["W", "LAST"])

                    let large = try await cluster.send(
                        .POST, "/data/Wide", #"{"t": "\#(String(repeating: "a", count: 80_000))"}"#)
                    #expect(large.status == 200, "\(large.text.prefix(200))")
                    #expect(try await cluster.send(.POST, "/data/Wide", #"{"t": "last"}"#).status == 200)
                    // Events reach a connection in commit order.
                    try await many.wait { _ in (try? many.data("LAST").count) == 1 }
                    try await one.wait { _ in (try? one.data("LAST").count) == 1 }
                    #expect(try one.data("W").count == 1)
                    #expect(try ids.map { try many.data($0).count }.reduce(0, +) == 0)
                }
            }
        }
    }

    @Test func aCostlyClauseOnALargeWriteHoldsBackNoOtherSubscriber() async throws {
        try await TestCluster.shared { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Big", #"{"t": "seed"}"#)
            _ = try await cluster.send(.POST, "/data/Other", #"{"x": 0}"#)
            let find = try await cluster.send(.POST, "/data/Big/find", #"{"where": "\#(Self.overLimit)"}"#)
            #expect(find.status == 400 && find.json["code"] as? Int == 1018, "\(find.text.prefix(200))")
            let key = cluster.app.keys[.js]!
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key) { costly in
                try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key) { other in
                    // The same rule refuses the clause at SUB_ON.
                    try costly.subscribe("OVER", "created", "Big", where: Self.overLimit)
                    try await costly.wait { _ in
                        (try? costly.payloads("SUB_RES", id: "OVER").isEmpty) == false
                            || (try? costly.payloads("SUB_READY", id: "OVER").isEmpty) == false
                    }
                    let refusal = try costly.payloads("SUB_RES", id: "OVER").first?["error"] as? [String: Any]
                    #expect(refusal?["code"] as? Int == 1018, "\(String(describing: refusal))")
                    #expect(try costly.payloads("SUB_READY", id: "OVER").isEmpty)

                    try costly.subscribe("COSTLY", "created", "Big", where: "t LIKE '\(Self.costliest)'")
                    try costly.subscribe("WIDE", "created", "Big", where: "t LIKE '\(Self.widest)'")
                    try costly.subscribe("LAST", "created", "Big", where: "t = 'last'")
                    try other.subscribe("X", "created", "Other")
                    try await costly.ready(["COSTLY", "WIDE", "LAST"])
                    try await other.ready(["X"])

                    let large = try await cluster.send(
                        .POST, "/data/Big", #"{"t": "\#(String(repeating: "a", count: 80_000))"}"#)
                    #expect(large.status == 200, "\(large.text.prefix(200))")
                    #expect(try await cluster.send(.POST, "/data/Other", #"{"x": 1}"#).status == 200)
                    try await other.wait { _ in (try? other.data("X").count) == 1 }
                    #expect(try other.data("X").compactMap { ($0 as? [String: Any])?["x"] as? Int } == [1])

                    // Events reach a connection in commit order: once LAST has its object, the
                    // large write's events have all been sent.
                    #expect(try await cluster.send(.POST, "/data/Big", #"{"t": "last"}"#).status == 200)
                    try await costly.wait { _ in (try? costly.data("LAST").count) == 1 }
                    let wide = try costly.data("WIDE").compactMap { ($0 as? [String: Any])?["t"] as? String }
                    #expect(wide.map(\.count) == [80_000], "the widest pattern is decided within its budget")
                    #expect(try costly.data("COSTLY").isEmpty)
                    // Both answers are the database's.
                    for (pattern, expected) in [(Self.widest, "1"), (Self.costliest, "0")] {
                        let clause = "t LIKE '\(pattern)'".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                        let count = try await cluster.send(.GET, "/data/Big/count?where=" + clause)
                        #expect(count.status == 200 && count.text == expected, "\(count.text.prefix(200))")
                    }
                }
            }
        }
    }

    @Test func selectorsShareThePatternLimitsAndTheWorkBudget() throws {
        let refused = #expect(throws: ErrorEnvelope.self) {
            _ = try Selector("city LIKE '" + String(repeating: "%a", count: 100) + "'")
        }
        #expect(refused?.code == 5013, "\(String(describing: refused))")
        // A pattern from a header escapes the parse-time limits: here a 40,000-character segment
        // whose only occurrence ends an 80,001-character header, 40,000 × 40,000 comparisons
        // greedily. The budget stops it, and a message that cannot be decided is not selected.
        let selector = try Selector("city LIKE shape")
        let costly = JSONObject([
            ("city", .string(String(repeating: "a", count: 80_000) + "b")),
            ("shape", .string("%" + String(repeating: "a", count: 40_000) + "b%")),
        ])
        #expect(!selector.selects(costly))
        #expect(selector.selects(JSONObject([("city", .string("aab")), ("shape", .string("%ab%"))])))
        #expect(!selector.selects(JSONObject([("city", .string("aba")), ("shape", .string("%ab%b"))])))
    }
}
