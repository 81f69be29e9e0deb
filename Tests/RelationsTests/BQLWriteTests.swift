import Foundation
import InternalProtocol
import NIOHTTP1
import TestSupport
import Testing

/// Backbeam's BQL beyond finds, through the gateway: removing the objects a query matches (a
/// window of them, or all), refreshing one object with the relationships a query joins, and the
/// relationship changes (`___add`, `___remove`) a save carries.
@Suite(.timeLimit(.minutes(20))) struct BQLWriteTests {
    @Test func removingAWindowOfMatchesRemovesWhatTheSameFindWindowShows() async throws {
        try await TestCluster.shared { cluster async throws in
            for value in 1...6 {
                let created = try await cluster.send(.POST, "/data/Task", #"{"v": \#(value)}"#)
                #expect(created.status == 200, "\(created.text)")
            }
            // The find's window and the removal's are the same objects: both in creation order.
            let window = #""query": "where v > ?", "params": [1], "limit": 2, "offset": 1"#
            let found = try await cluster.send(.POST, "/data/Task/bql", "{\(window)}")
            let shown = try #require(found.json["objects"] as? [[String: Any]], "\(found.text)")
            let ids = shown.compactMap { $0["objectId"] as? String }
            #expect(ids.count == 2 && found.json["totalCount"] as? Int == 5, "\(found.text)")
            let removed = try await cluster.send(.POST, "/data/Task/bql/remove", "{\(window)}")
            #expect(removed.status == 200 && removed.json["removed"] as? Int == 2, "\(removed.text)")
            for id in ids {
                let gone = try await cluster.send(.GET, "/data/Task/\(id)")
                #expect(gone.status == 404 && gone.json["code"] as? Int == 1000, "\(gone.text)")
            }
            #expect(try await cluster.send(.GET, "/data/Task/count").text == "4")

            // Past the last match nothing goes; without a limit every match after the offset goes.
            let beyond = try await cluster.send(
                .POST, "/data/Task/bql/remove", #"{"query": "where v > ?", "params": [1], "limit": 5, "offset": 3}"#)
            #expect(beyond.json["removed"] as? Int == 0, "\(beyond.text)")
            let all = try await cluster.send(.POST, "/data/Task/bql/remove", #"{"query": "v > ?", "params": [1]}"#)
            #expect(all.json["removed"] as? Int == 3, "\(all.text)")
            let rest = try await cluster.send(.POST, "/data/Task/bql", #"{"query": ""}"#)
            let values = ((rest.json["objects"] as? [[String: Any]]) ?? []).map { $0["v"] as? Int }
            #expect(values == [1], "\(rest.text)")
            // No query at all is every object (removeAllObjects on an unconstrained query).
            #expect(try await cluster.send(.POST, "/data/Task/bql/remove", "{}").json["removed"] as? Int == 1)
            #expect(try await cluster.send(.GET, "/data/Task/count").text == "0")
        }
    }

    @Test func malformedRemovalsAreRefusedAndRemoveNothing() async throws {
        try await TestCluster.shared { cluster async throws in
            for value in 1...3 { _ = try await cluster.send(.POST, "/data/Keep", #"{"v": \#(value)}"#) }
            let cases: [(String, String, Int)] = [
                ("/data/Keep/bql/remove", #"{"query": "where v > ?", "params": [0], "limit": 0}"#, 1016),
                ("/data/Keep/bql/remove", #"{"query": "where v > ?", "params": [0], "limit": 1001}"#, 1016),
                ("/data/Keep/bql/remove", #"{"query": "where v > ?", "params": [0], "limit": -1}"#, 1016),
                ("/data/Keep/bql/remove", #"{"query": "where v > ?", "params": [0], "limit": "many"}"#, 1016),
                ("/data/Keep/bql/remove", #"{"query": "where v > ?", "params": [0], "limit": 1.5}"#, 1016),
                ("/data/Keep/bql/remove", #"{"query": "where v > ?", "params": [0], "limit": [1]}"#, 1016),
                ("/data/Keep/bql/remove", #"{"query": "where v > ?", "params": [0], "offset": -1}"#, 1016),
                ("/data/Keep/bql/remove", #"{"query": "where v > ?", "params": [0], "offset": "x"}"#, 1016),
                ("/data/Keep/bql/remove", #"{"query": "join things where v > ?", "params": [0]}"#, 1017),
                ("/data/Keep/bql/remove", #"{"query": "where v >"}"#, 1017),
                ("/data/Keep/bql/remove", #"{"query": "where v > ? and v < ?", "params": [0]}"#, 1017),
                ("/data/Keep/bql/remove", #"{"query": "where nope > ?", "params": [0]}"#, 1011),
                ("/data/Keep/bql/remove", #"{"query": 5}"#, 1022),
                ("/data/Keep/bql/remove", #"{"query": "where v > ?", "params": 0}"#, 1022),
                ("/data/Keep/bql/remove", #"[1]"#, 1022),
                ("/data/Keep/bql/remove", "{not json", 1022),
                ("/data/Nowhere/bql/remove", #"{"query": "where v > ?", "params": [0]}"#, 1009),
                // A find's window is read the same way (it fell back to the default page).
                ("/data/Keep/bql", #"{"query": "where v > ?", "params": [0], "limit": "many"}"#, 1016),
                ("/data/Keep/bql", #"{"query": "where v > ?", "params": [0], "limit": 1.5}"#, 1016),
                ("/data/Keep/bql", #"{"query": "where v > ?", "params": [0], "offset": "x"}"#, 1016),
                ("/data/Keep/bql", #"{"query": "where v > ?", "params": [0], "limit": 101}"#, 1016),
            ]
            for (path, body, code) in cases {
                let answer = try await cluster.send(.POST, path, body)
                #expect(answer.json["code"] as? Int == code, "\(body): \(answer.text)")
                #expect((400..<500).contains(answer.status), "\(body): \(answer.status)")
            }
            #expect(try await cluster.send(.GET, "/data/Keep/count").text == "3")
        }
    }

    /// A removal applies the Remove permission as every delete does: a caller removes only the
    /// objects it may remove, and its window counts only those; one who may remove none is refused.
    @Test func aRemovalTakesOnlyWhatTheCallerMayRemove() async throws {
        try await TestCluster.shared { cluster async throws in
            let alice = try await cluster.account("alice@example.com")
            let bob = try await cluster.account("bob@example.com")
            for table in ["Chore", "Locked"] {
                let schema = try await cluster.send(
                    .POST, "/data/\(table)/schema", #"[{"name": "name", "type": "STRING"}]"#, key: .serverCode)
                #expect(schema.status == 200, "\(schema.text)")
            }
            let deny = try await cluster.send(
                .PUT, "/data/Chore/permissions/DENY", #"{"permission": "REMOVE", "role": "*"}"#, key: .serverCode)
            let owner = try await cluster.send(
                .PUT, "/data/Chore/permissions/owner/GRANT", #"{"permission": "REMOVE"}"#, key: .serverCode)
            #expect(deny.status == 200 && owner.status == 200, "\(deny.text) \(owner.text)")
            // Bob's objects are the oldest: a window over every match would start with them.
            for (name, token) in [("b1", bob.token), ("b2", bob.token), ("a1", alice.token), ("a2", alice.token)] {
                let created = try await cluster.send(.POST, "/data/Chore", #"{"name": "\#(name)"}"#, token: token)
                #expect(created.status == 200, "\(created.text)")
            }
            func owned(_ id: String) async throws -> String {
                try await cluster.send(.GET, "/data/Chore/count?where=ownerId%20%3D%20%27\(id)%27").text
            }
            let first = try await cluster.send(.POST, "/data/Chore/bql/remove", #"{"limit": 1}"#, token: alice.token)
            #expect(first.json["removed"] as? Int == 1, "\(first.text)")
            #expect(try await owned(alice.id) == "1")
            #expect(try await owned(bob.id) == "2")
            let aimed = try await cluster.send(
                .POST, "/data/Chore/bql/remove", #"{"query": "where ownerId = ?", "params": ["\#(bob.id)"]}"#,
                token: alice.token)
            #expect(aimed.status == 200 && aimed.json["removed"] as? Int == 0, "\(aimed.text)")
            let everything = try await cluster.send(.POST, "/data/Chore/bql/remove", "{}", token: bob.token)
            #expect(everything.json["removed"] as? Int == 2, "\(everything.text)")
            #expect(try await owned(alice.id) == "1")
            #expect(try await owned(bob.id) == "0")

            // Where no row could be removed (Remove denied to every role, no owner grant): refused,
            // nothing removed.
            for name in ["l1", "l2"] { _ = try await cluster.send(.POST, "/data/Locked", #"{"name": "\#(name)"}"#) }
            let closed = try await cluster.send(
                .PUT, "/data/Locked/permissions/DENY", #"{"permission": "REMOVE", "role": "*"}"#, key: .serverCode)
            #expect(closed.status == 200, "\(closed.text)")
            let refused = try await cluster.send(.POST, "/data/Locked/bql/remove", #"{"limit": 1}"#)
            #expect(refused.status == 403 && refused.json["code"] as? Int == 1023, "\(refused.text)")
            #expect(try await cluster.send(.GET, "/data/Locked/count").text == "2")
        }
    }

    @Test func refreshingAnObjectReloadsItsFieldsAndTheRelationshipsItsQueryJoins() async throws {
        try await TestCluster.shared { cluster async throws in
            let movies = try await cluster.createNamed("Movie", ["M1", "M2"])
            var reviews: [String] = []
            for stars in 1...5 {
                let review = try await cluster.send(.POST, "/data/Review", #"{"stars": \#(stars)}"#)
                reviews.append(try #require(review.json["objectId"] as? String, "\(review.text)"))
            }
            let ids = reviews.map { "\"\($0)\"" }.joined(separator: ",")
            #expect(try await cluster.send(.POST, "/data/Movie/\(movies[0])/reviews:Review:n", "[\(ids)]").text == "5")
            #expect(try await cluster.send(.PUT, "/data/Movie/\(movies[0])", #"{"name": "M1 (cut)"}"#).status == 200)

            let refreshed = try await cluster.send(
                .POST, "/data/Movie/bql/refresh",
                #"{"objectId": "\#(movies[0])", "query": "join reviews having stars > ?", "params": [3]}"#)
            #expect(refreshed.status == 200, "\(refreshed.text)")
            #expect(
                refreshed.json["name"] as? String == "M1 (cut)" && refreshed.json["objectId"] as? String == movies[0])
            let joined = ((refreshed.json["reviews"] as? [[String: Any]]) ?? []).compactMap { $0["stars"] as? Int }
            #expect(joined.sorted() == [4, 5], "\(refreshed.text)")
            // Without a query only the regular fields come back.
            let plain = try await cluster.send(.POST, "/data/Movie/bql/refresh", #"{"objectId": "\#(movies[1])"}"#)
            #expect(plain.json["name"] as? String == "M2" && plain.json["reviews"] == nil, "\(plain.text)")
            let everyReview = try await cluster.send(
                .POST, "/data/Movie/bql/refresh", #"{"objectId": "\#(movies[0])", "query": "join reviews"}"#)
            #expect(((everyReview.json["reviews"] as? [[String: Any]]) ?? []).count == 5, "\(everyReview.text)")

            let cases: [(String, String, Int)] = [
                ("/data/Movie/bql/refresh", #"{"objectId": "missing"}"#, 1000),
                ("/data/Movie/bql/refresh", #"{"objectId": "missing", "query": "join reviews"}"#, 1000),
                (
                    "/data/Movie/bql/refresh",
                    #"{"objectId": "\#(movies[0])", "query": "where name = ?", "params": ["M2"]}"#, 1017
                ),
                (
                    "/data/Movie/bql/refresh",
                    #"{"objectId": "\#(movies[0])", "query": "join reviews where stars > 1"}"#, 1017
                ),
                ("/data/Movie/bql/refresh", #"{"objectId": "\#(movies[0])", "query": "join reviews stars"}"#, 1017),
                ("/data/Movie/bql/refresh", #"{"objectId": "\#(movies[0])", "query": "join nothing"}"#, 1011),
                ("/data/Movie/bql/refresh", #"{"query": "join reviews"}"#, 1022),
                ("/data/Movie/bql/refresh", #"{"objectId": 7}"#, 1022),
                ("/data/Movie/bql/refresh", #"{"objectId": ""}"#, 1022),
                ("/data/Movie/bql/refresh", #"{"objectId": "\#(movies[0])", "params": "x"}"#, 1022),
                ("/data/Nowhere/bql/refresh", #"{"objectId": "\#(movies[0])"}"#, 1009),
            ]
            for (path, body, code) in cases {
                let answer = try await cluster.send(.POST, path, body)
                #expect(answer.json["code"] as? Int == code, "\(body): \(answer.text)")
                #expect((400..<500).contains(answer.status), "\(body): \(answer.status)")
            }
        }
    }

    @Test func aSaveAddsAndRemovesRelatedObjectsInItsOwnTransaction() async throws {
        try await TestCluster.shared { cluster async throws in
            let ids = try await cluster.createNamed("Person", ["Ann", "Bob", "Cy", "Di"])
            let (ann, bob, cy, di) = (ids[0], ids[1], ids[2], ids[3])
            #expect(try await cluster.send(.POST, "/data/Person/\(ann)/friends:Person:n", #"["\#(bob)"]"#).text == "1")
            // A save with relation changes creates no column, so `age` is made by a plain save first.
            #expect(try await cluster.send(.PUT, "/data/Person/\(ann)", #"{"age": 1}"#).status == 200)
            func friends(_ id: String) async throws -> Set<String> {
                Set(try await cluster.send(.GET, "/data/Person/\(id)/friends?pageSize=100").names())
            }

            let updated = try await cluster.send(
                .PUT, "/data/Person/\(ann)",
                #"{"age": 30, "friends": {"___add": ["\#(cy)", {"objectId": "\#(di)"}], "___remove": ["\#(bob)"]}}"#)
            #expect(updated.status == 200 && updated.json["age"] as? Int == 30, "\(updated.text)")
            #expect(try await friends(ann) == ["Cy", "Di"])
            let created = try await cluster.send(
                .POST, "/data/Person", #"{"name": "Eve", "friends": {"___add": ["\#(ann)", "\#(bob)"]}}"#)
            let eve = try #require(created.json["objectId"] as? String, "\(created.text)")
            #expect(created.json["name"] as? String == "Eve")
            #expect(try await friends(eve) == ["Ann", "Bob"])
            let saved = try await cluster.send(
                .PUT, "/data/Person", #"{"objectId": "\#(eve)", "friends": {"___remove": ["\#(ann)"], "___add": null}}"#
            )
            #expect(saved.status == 200, "\(saved.text)")
            #expect(try await friends(eve) == ["Bob"])
            // Loaded children sent back with a plain save still leave the relation alone.
            let echoed = try await cluster.send(
                .PUT, "/data/Person/\(eve)", #"{"friends": [{"objectId": "\#(ann)"}], "age": 5}"#)
            #expect(echoed.status == 200, "\(echoed.text)")
            #expect(try await friends(eve) == ["Bob"])

            let cases: [(HTTPMethod, String, String, Int)] = [
                (.PUT, "/data/Person/\(ann)", #"{"age": 2, "enemies": {"___add": ["\#(bob)"]}}"#, 1011),
                (.PUT, "/data/Person/\(ann)", #"{"age": 2, "name": {"___add": ["\#(bob)"]}}"#, 1027),
                (.PUT, "/data/Person/\(ann)", #"{"age": 2, "fresh": 1, "friends": {"___add": ["\#(bob)"]}}"#, 1011),
                (
                    .PUT, "/data/Person/\(ann)",
                    #"{"age": 2, "friends": {"___add": ["\#(bob)"], "___remove": ["\#(bob)"]}}"#, 1022
                ),
                (.PUT, "/data/Person/\(ann)", #"{"age": 2, "friends": {"___add": ["\#(bob)"], "set": []}}"#, 1022),
                (.PUT, "/data/Person/\(ann)", #"{"age": 2, "friends": {"___add": "\#(bob)"}}"#, 1022),
                (.PUT, "/data/Person/\(ann)", #"{"age": 2, "friends": {"___add": [7.5]}}"#, 1022),
                (
                    .PUT, "/data/Person/\(ann)",
                    #"{"age": 2, "friends": {"___add": ["\#(bob)"]}, "FRIENDS": {"___remove": ["\#(cy)"]}}"#, 1022
                ),
                (.PUT, "/data/Person/missing", #"{"friends": {"___add": ["\#(bob)"]}}"#, 1000),
                (.POST, "/data/Person", #"{"name": "Zed", "enemies": {"___add": ["\#(bob)"]}}"#, 1011),
                (.POST, "/data/Nobody", #"{"name": "Zed", "friends": {"___add": ["\#(bob)"]}}"#, 1009),
            ]
            for (method, path, body, code) in cases {
                let answer = try await cluster.send(method, path, body)
                #expect(answer.json["code"] as? Int == code, "\(body): \(answer.text)")
                #expect((400..<500).contains(answer.status), "\(body): \(answer.status)")
            }
            let after = try await cluster.send(.GET, "/data/Person/\(ann)")
            #expect(after.json["age"] as? Int == 30 && after.json["fresh"] == nil, "\(after.text)")
            #expect(try await friends(ann) == ["Cy", "Di"])
            #expect(try await cluster.send(.GET, "/data/Person/count?where=name%3D%27Zed%27").text == "0")

            // Without AddRelation the whole save is refused and rolled back; DeleteRelation alone still works.
            let denied = try await cluster.send(
                .PUT, "/data/Person/permissions/DENY", #"{"permission": "ADD_RELATION", "role": "*"}"#,
                key: .serverCode)
            #expect(denied.status == 200, "\(denied.text)")
            let refused = try await cluster.send(
                .PUT, "/data/Person/\(ann)", #"{"age": 99, "friends": {"___add": ["\#(bob)"]}}"#)
            #expect(refused.status == 403 && refused.json["code"] as? Int == 1023, "\(refused.text)")
            #expect(try await cluster.send(.GET, "/data/Person/\(ann)").json["age"] as? Int == 30)
            #expect(try await friends(ann) == ["Cy", "Di"])
            let unlinked = try await cluster.send(
                .PUT, "/data/Person/\(ann)", #"{"age": 31, "friends": {"___remove": ["\#(cy)"]}}"#)
            #expect(unlinked.status == 200 && unlinked.json["age"] as? Int == 31, "\(unlinked.text)")
            #expect(try await friends(ann) == ["Di"])
        }
    }
}
