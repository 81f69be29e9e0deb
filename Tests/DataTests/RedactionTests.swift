import Foundation
import InternalProtocol
import NIOHTTP1
import Testing
import TestSupport

/// No client response carries PostgreSQL's own text: refusals it raises answer with a code and a
/// message this project wrote.
@Suite(.timeLimit(.minutes(5))) struct RedactionTests {
    /// Phrases only PostgreSQL's messages and details contain.
    static let databaseText = ["Key (", "already exists.", "violates", "does not exist", "function sum(", "operator does not exist", "ERROR", "SQLSTATE"]

    @Test func databaseRefusalsAnswerWithOurOwnWords() async throws {
        try await TestCluster.with { cluster async throws in
            let created = try await cluster.send(.POST, "/data/Item", #"{"name": "a", "n": 1}"#)
            let id = try #require(created.json["objectId"] as? String, "\(created.text)")
            let refusals: [(HTTPMethod, String, String?, Int)] = [
                (.POST, "/data/Item", #"{"objectId": "\#(id)", "name": "b"}"#, 1025),
                (.GET, "/data/Item?props=Sum(name)", nil, 1017),
                (.GET, "/data/Item?where=n%20%2F%200%20%3D%201", nil, 1017),
                (.GET, "/data/Item?sortBy=-name", nil, 1017),
            ]
            for (method, path, body, code) in refusals {
                let answer = try await cluster.send(method, path, body)
                #expect((400..<500).contains(answer.status), "\(path): \(answer.text)")
                #expect(answer.json["code"] as? Int == code, "\(path): \(answer.text)")
                for phrase in Self.databaseText {
                    #expect(!answer.text.contains(phrase), "\(path) leaks '\(phrase)': \(answer.text)")
                }
            }
        }
    }
}
