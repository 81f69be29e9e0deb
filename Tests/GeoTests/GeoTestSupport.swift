import Foundation
import NIOHTTP1
import TestSupport
import Testing

extension TestCluster {
    /// Saves a point and answers its objectId.
    @discardableResult
    func savePoint(
        _ latitude: Double, _ longitude: Double, categories: [String]? = nil, metadata: String = "{}"
    ) async throws -> String {
        let names = categories.map { ", \"categories\": [" + $0.map { "\"\($0)\"" }.joined(separator: ",") + "]" } ?? ""
        let answer = try await send(
            .POST, "/geo/points",
            #"{"latitude": \#(latitude), "longitude": \#(longitude), "metadata": \#(metadata)\#(names)}"#)
        let point = answer.json["geopoint"] as? [String: any Sendable]
        guard answer.status == 200, let id = point?["objectId"] as? String else {
            throw GeoTestFailure(description: "save: \(answer.status) \(answer.text)")
        }
        return id
    }

    /// A search's items (`GET /geo/…`), failing the test unless it answers 200.
    func geo(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [[String: any Sendable]]
    {
        let answer = try await send(.GET, path)
        #expect(answer.status == 200, "\(path): \(answer.text.prefix(300))", sourceLocation: sourceLocation)
        return answer.items
    }
}

/// A request in a test's set-up failed.
struct GeoTestFailure: Error, CustomStringConvertible {
    let description: String
}
