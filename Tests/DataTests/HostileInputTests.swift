import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Inputs built to cost the server work are refused by their limits with the JSON error shape:
/// the where language's depth, token and length limits, list limits, and the size of the
/// request head, at the gateway's HTTP decoder and at the hop to the owning service.
@Suite(.timeLimit(.minutes(20))) struct HostileInputTests {
    private static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    @Test func whereClausesBeyondTheLimitsAre1018() async throws {
        try await TestCluster.shared { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Hostile", #"{"name": "a", "v": 1}"#)
            let nested = String(repeating: "(", count: 5_000) + "v = 1" + String(repeating: ")", count: 5_000)
            let twentyThousand = "v IN (" + (1...20_000).map(String.init).joined(separator: ",") + ")"
            let manyTokens = "v IN (" + (1...6_000).map(String.init).joined(separator: ",") + ")"
            let nestedShort = String(repeating: "(", count: 200) + "v = 1" + String(repeating: ")", count: 200)
            let answers = [
                try await cluster.send(.GET, "/data/Hostile?where=" + Self.encoded(nestedShort)),
                try await cluster.send(.POST, "/data/Hostile/find", #"{"where": "\#(nested)"}"#),
                try await cluster.send(.POST, "/data/Hostile/find", #"{"where": "\#(twentyThousand)"}"#),
                try await cluster.send(.POST, "/data/Hostile/find", #"{"where": "\#(manyTokens)"}"#),
            ]
            for answer in answers {
                #expect(answer.status == 400 && answer.json["code"] as? Int == 1018, "\(answer.text.prefix(200))")
            }
        }
    }

    @Test func listsBeyondTheirLimitsAre1018() async throws {
        try await TestCluster.shared { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Hostile", #"{"name": "a", "v": 1}"#)
            let props = Array(repeating: "\"name\"", count: 1_001).joined(separator: ",")
            let params = (1...1_001).map(String.init).joined(separator: ",")
            let longSort = String(repeating: "name,", count: 14_000)
            let answers = [
                try await cluster.send(.POST, "/data/Hostile/find", #"{"props": [\#(props)]}"#),
                try await cluster.send(.POST, "/data/Hostile/find", #"{"sortBy": "\#(longSort)"}"#),
                try await cluster.send(
                    .POST, "/data/Hostile/bql", #"{"query": "where v in ?", "params": [[\#(params)]]}"#),
                try await cluster.send(.GET, "/data/Hostile/filter?v%5Bin%5D=" + params),
            ]
            for answer in answers {
                #expect(answer.status == 400 && answer.json["code"] as? Int == 1018, "\(answer.text.prefix(200))")
            }
        }
    }

    @Test func sortingByANegatedTextColumnIsTheClientsError() async throws {
        try await TestCluster.shared { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Hostile", #"{"name": "a", "v": 1}"#)
            let answer = try await cluster.send(.GET, "/data/Hostile?sortBy=-name")
            #expect((400..<500).contains(answer.status), "\(answer.text)")
            #expect(answer.json["code"] as? Int == 1017, "\(answer.text)")
            #expect(!answer.text.contains("operator"), "\(answer.text)")
        }
    }

    /// A query string too long to cross to the service is 414 at the gateway, and the internal
    /// connection it would have broken keeps serving; a head beyond the decoder's limit is 431.
    @Test func oversizedRequestHeadsAreJSONErrors() async throws {
        try await TestCluster.shared { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Hostile", #"{"name": "a", "v": 1}"#)
            let crossing = "v IN (" + (1...1_500).map(String.init).joined(separator: ",") + ")"
            let fits = try await cluster.send(.GET, "/data/Hostile?where=" + Self.encoded(crossing))
            #expect(fits.status == 200, "\(fits.text.prefix(200))")
            let tooLong = "v IN (" + (1...4_000).map(String.init).joined(separator: ",") + ")"
            async let refused = cluster.send(.GET, "/data/Hostile?where=" + Self.encoded(tooLong))
            async let concurrent = cluster.send(.GET, "/data/Hostile?where=v%3D1")
            let (long, normal) = try await (refused, concurrent)
            #expect(long.status == 414 && long.json["code"] as? Int == 414, "\(long.text.prefix(200))")
            #expect(normal.status == 200, "\(normal.text)")
            let huge = try await cluster.send(.GET, "/data/Hostile?where=" + String(repeating: "a", count: 200_000))
            #expect(huge.status == 431 && huge.json["code"] as? Int == 431, "\(huge.status) \(huge.text.prefix(200))")
            let header = try await HTTPTestClient.send(
                .GET, cluster.gatewayURL + cluster.prefix() + "/data/Hostile",
                headers: [("user-agent", String(repeating: "b", count: 20_000))])
            #expect(header.status == 431 && header.json["code"] as? Int == 431, "\(header.text.prefix(200))")
            #expect(try await cluster.send(.GET, "/data/Hostile/count").text == "1")
        }
    }
}
