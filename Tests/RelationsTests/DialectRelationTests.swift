import DataEngine
import Foundation
import InternalProtocol
import NIOHTTP1
import Permissions
import QueryLanguage
import TestSupport
import Testing

/// QuickBlox's `_parent_id` (a strong reference) and Backbeam's `join … having …`.
@Suite(.timeLimit(.minutes(20))) struct DialectRelationTests {
    @Test func deletingAParentDeletesItsChildrenDownEveryLevel() async throws {
        try await EngineFixture.with { fixture in
            let movies = try await fixture.objects("Movie", ["M1", "M2"])
            func child(_ table: String, _ name: String, of parent: String) async throws -> String {
                try #require(
                    try await fixture.create(table, #"{"name": "\#(name)", "_parent_id": "\#(parent)"}"#)["objectId"]
                        as? String)
            }
            let first = try await child("Comment", "c1", of: movies[0])
            _ = try await child("Comment", "c2", of: movies[0])
            _ = try await child("Comment", "c3", of: movies[1])
            _ = try await child("Reply", "r1", of: first)
            let moved = try await child("Comment", "c4", of: movies[0])
            // `_parent_id` filters and is set like any field.
            #expect(try await fixture.find("Comment", [("where", "_parent_id = '\(movies[0])'")]).count == 3)
            _ = try await fixture.engine.update(
                "Comment", id: moved, changes: try fixture.object(#"{"_parent_id": "\#(movies[1])"}"#),
                identity: fixture.rest,
                logger: fixture.logger)

            let catalog = try await fixture.engine.cache.catalog(for: fixture.appID)
            #expect(catalog.table(named: "Comment")?.column(named: "_parent_id")?.indexed == true)
            // Children the caller may not remove stay (their parent's id no longer names anything).
            try await fixture.engine.setRulePermission(
                PermissionChange(decision: .deny, operation: .remove, principal: .role(Principal.everyone)),
                table: "Reply",
                identity: fixture.serverCode, logger: fixture.logger)
            _ = try await fixture.engine.delete("Movie", id: movies[0], identity: fixture.rest, logger: fixture.logger)
            let comments = try await fixture.find("Comment", [("sortBy", "name")]).map { $0["name"] as? String }
            #expect(comments == ["c3", "c4"])
            #expect(try await fixture.rowCount("Reply") == 1)
            try await fixture.engine.setRulePermission(
                PermissionChange(decision: nil, operation: .remove, principal: .role(Principal.everyone)),
                table: "Reply",
                identity: fixture.serverCode, logger: fixture.logger)
            let removed = try await fixture.engine.deleteBulk(
                "Movie", condition: try QueryParser.condition("name = 'M2'"), identity: fixture.rest,
                logger: fixture.logger)
            #expect(removed == 1)
            #expect(try await fixture.rowCount("Comment") == 0)
        }
    }

    @Test func bqlJoinsLoadRelationshipsAndQuickBloxFiltersByParent() async throws {
        try await TestCluster.shared { cluster async throws in
            let movies = try await cluster.createNamed("Movie", ["M1", "M2"])
            var reviews: [String] = []
            for stars in 1...5 {
                let review = try await cluster.send(
                    .POST, "/data/Review", #"{"stars": \#(stars), "_parent_id": "\#(movies[0])"}"#)
                reviews.append(try #require(review.json["objectId"] as? String))
            }
            let ids = reviews.map { "\"\($0)\"" }.joined(separator: ",")
            #expect(try await cluster.send(.POST, "/data/Movie/\(movies[0])/reviews:Review:n", "[\(ids)]").text == "5")
            let bql = try await cluster.send(
                .POST, "/data/Movie/bql",
                #"{"query": "join reviews having stars > ? where name = ?", "params": [3, "M1"]}"#)
            #expect(bql.json["totalCount"] as? Int == 1, "\(bql.text)")
            let objects = try #require(bql.json["objects"] as? [[String: Any]])
            #expect(((objects.first?["reviews"] as? [[String: Any]]) ?? []).map { $0["stars"] as? Int } == [4, 5])
            let unknown = try await cluster.send(.POST, "/data/Movie/bql", #"{"query": "join nothing"}"#)
            #expect(unknown.status == 400 && unknown.json["code"] as? Int == 1011)

            let filtered = try await cluster.send(
                .GET, "/data/Review/filter?_parent_id=\(movies[0])&stars%5Bgte%5D=4&count=1")
            #expect(filtered.json["count"] as? Int == 2, "\(filtered.text)")
            #expect(try await cluster.send(.DELETE, "/data/Movie/\(movies[0])").status == 200)
            #expect(try await cluster.send(.GET, "/data/Review/count").text == "0")
        }
    }
}
