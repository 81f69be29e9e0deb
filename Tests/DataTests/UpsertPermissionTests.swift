import Foundation
import InternalProtocol
import NIOHTTP1
import TestSupport
import Testing

/// Every upsert — `PUT /data/{table}/upsert`, `PUT /data/bulkupsert/{table}` and a unit of
/// work's UPSERT and UPSERT_BULK — takes an update's permission decision for the object it names:
/// on an owner-only table another user can neither overwrite nor read someone's object with one.
@Suite(.timeLimit(.minutes(20))) struct UpsertPermissionTests {
    @Test func anotherUsersUpsertsAreRefusedWholeWhileOwnAndNewObjectsStillUpsert() async throws {
        try await TestCluster.shared { cluster async throws in
            let alice = try await cluster.account("alice@example.com")
            let bob = try await cluster.account("bob@example.com")
            let created = try await cluster.send(
                .POST, "/data/Note", #"{"title": "hers", "secret": "s3cr3t"}"#, token: alice.token)
            let hers = try #require(created.json["objectId"] as? String, "\(created.text)")
            try await ownerOnly("Note", cluster)
            let original = try await cluster.send(.GET, "/data/Note/\(hers)", token: alice.token)
            #expect(original.status == 200 && original.text.contains("s3cr3t"), "\(original.text)")

            // What Bob is answered when he updates her object; each upsert must answer the same.
            let update = try await cluster.send(.PUT, "/data/Note/\(hers)", #"{"title": "x"}"#, token: bob.token)
            #expect(update.status == 403 && update.json["code"] as? Int == 1023, "\(update.text)")
            let refusal = try #require(update.json["message"] as? String)

            let requests = [
                ("/data/Note/upsert", #"{"objectId": "\#(hers)", "title": "x"}"#),
                ("/data/Note/upsert", #"{"objectId": "\#(hers)"}"#),
                (
                    "/data/bulkupsert/Note",
                    #"[{"objectId": "BOB-NEW-1", "title": "new"}, {"objectId": "\#(hers)", "title": "x"}]"#
                ),
                ("/data/bulkupsert/Note", #"[{"title": "new"}, {"objectId": "\#(hers)"}]"#),
            ]
            for (path, body) in requests {
                let answer = try await cluster.send(.PUT, path, body, token: bob.token)
                #expect(
                    answer.status == 403 && answer.json["code"] as? Int == 1023
                        && answer.json["message"] as? String == refusal,
                    "\(path) \(body) → \(answer.status) \(answer.text)")
                #expect(!answer.text.contains("s3cr3t"), "\(path) \(body) revealed her object: \(answer.text)")
            }

            // In a unit of work the refusal fails the transaction: Bob's create before it is undone.
            let operations = [
                #"{"operationType": "UPSERT", "table": "Note", "payload": {"objectId": "\#(hers)", "title": "x"}}"#,
                #"{"operationType": "UPSERT", "table": "Note", "payload": {"objectId": "\#(hers)"}}"#,
                #"{"operationType": "UPSERT_BULK", "table": "Note", "payload": [{"objectId": "BOB-NEW-2", "title": "new"}, {"objectId": "\#(hers)", "title": "x"}]}"#,
            ]
            for operation in operations {
                let work =
                    #"{"operations": [{"operationType": "CREATE", "table": "Note", "payload": {"title": "bob's"}}, \#(operation)]}"#
                let answer = try await cluster.send(.POST, "/transaction/unit-of-work", work, token: bob.token)
                let error = answer.json["error"] as? [String: Any]
                #expect(
                    answer.json["success"] as? Bool == false && error?["code"] as? Int == 1023
                        && error?["message"] as? String == refusal,
                    "\(operation) → \(answer.text)")
                #expect(!answer.text.contains("s3cr3t"), "\(operation) revealed her object: \(answer.text)")
            }

            // A refused upsert that names a new property adds no column: the refusal comes inside
            // the write's own transaction, which the column's addition shares.
            let widening = try await cluster.send(
                .PUT, "/data/Note/upsert", #"{"objectId": "\#(hers)", "bobsNewColumn": "x"}"#, token: bob.token)
            #expect(widening.status == 403, "\(widening.text)")
            let properties = try await cluster.send(.GET, "/data/Note/properties", key: .serverCode)
            #expect(properties.status == 200 && !properties.text.contains("bobsNewColumn"), "\(properties.text)")
            // One statement cannot both insert and update a row: naming an id twice is the client's error.
            let twice = try await cluster.send(
                .PUT, "/data/bulkupsert/Note",
                #"[{"objectId": "BOB-TWICE", "title": "a"}, {"objectId": "BOB-TWICE", "title": "b"}]"#,
                token: bob.token)
            #expect(twice.status == 400 && twice.text.contains("more than once"), "\(twice.text)")

            let after = try await cluster.send(.GET, "/data/Note/\(hers)", token: alice.token)
            #expect(after.text == original.text, "her object changed: \(after.text)")
            #expect(
                try await cluster.send(.GET, "/data/Note/count", token: bob.token).text == "0",
                "a refused request wrote rows")
            for id in ["BOB-NEW-1", "BOB-NEW-2"] {
                let lookup = try await cluster.send(.GET, "/data/Note/\(id)", token: bob.token)
                #expect(lookup.status == 404 && lookup.json["code"] as? Int == 1000, "\(id): \(lookup.text)")
            }

            // Her own upserts of her object still work, through every door.
            let own = try await cluster.send(
                .PUT, "/data/Note/upsert", #"{"objectId": "\#(hers)", "title": "edited"}"#, token: alice.token)
            #expect(
                own.status == 200 && own.json["title"] as? String == "edited"
                    && own.json["secret"] as? String == "s3cr3t",
                "\(own.text)")
            let ownBulk = try await cluster.send(
                .PUT, "/data/bulkupsert/Note", #"[{"objectId": "\#(hers)", "title": "bulk"}, {"title": "another"}]"#,
                token: alice.token)
            #expect(ownBulk.status == 200 && ownBulk.text.hasPrefix("[\"\(hers)\","), "\(ownBulk.text)")
            let ownWork = #"""
                {"operations": [{"operationType": "UPSERT", "table": "Note", "payload": {"objectId": "\#(hers)", "title": "one"}},
                 {"operationType": "UPSERT_BULK", "table": "Note", "payload": [{"objectId": "\#(hers)", "title": "work"}]}]}
                """#
            let worked = try await cluster.send(.POST, "/transaction/unit-of-work", ownWork, token: alice.token)
            #expect(worked.json["success"] as? Bool == true, "\(worked.text)")
            #expect(
                try await cluster.send(.GET, "/data/Note/\(hers)", token: alice.token).json["title"] as? String
                    == "work")
            #expect(try await cluster.send(.GET, "/data/Note/count", token: alice.token).text == "2")

            // Bob's upserts create objects of his own, and update them.
            let fresh = try await cluster.send(.PUT, "/data/Note/upsert", #"{"title": "bob's"}"#, token: bob.token)
            #expect(fresh.status == 200 && fresh.json["ownerId"] as? String == bob.id, "\(fresh.text)")
            let named = try await cluster.send(
                .PUT, "/data/Note/upsert", #"{"objectId": "BOB-OWN", "title": "b"}"#, token: bob.token)
            #expect(named.status == 200 && named.json["ownerId"] as? String == bob.id, "\(named.text)")
            let again = try await cluster.send(
                .PUT, "/data/Note/upsert", #"{"objectId": "BOB-OWN", "title": "c"}"#, token: bob.token)
            #expect(again.status == 200 && again.json["title"] as? String == "c", "\(again.text)")
            #expect(try await cluster.send(.GET, "/data/Note/count", token: bob.token).text == "2")

            // Where Find is denied but Update allowed, an upsert answers what an update does.
            let board = try await cluster.send(.POST, "/data/Board", #"{"title": "a"}"#, token: alice.token)
            let boardID = try #require(board.json["objectId"] as? String, "\(board.text)")
            let hideBoard = #"{"permission": "FIND", "role": "*"}"#
            #expect(
                try await cluster.send(.PUT, "/data/Board/permissions/DENY", hideBoard, key: .serverCode).status == 200)
            let updated = try await cluster.send(.PUT, "/data/Board/\(boardID)", #"{"title": "b"}"#, token: bob.token)
            let upserted = try await cluster.send(
                .PUT, "/data/Board/upsert", #"{"objectId": "\#(boardID)", "title": "c"}"#, token: bob.token)
            #expect(upserted.status == updated.status, "update \(updated.text), upsert \(upserted.text)")
            #expect(
                Set(upserted.json.keys) == Set(updated.json.keys), "update \(updated.text), upsert \(upserted.text)")
        }
    }

    /// Find, Update and Remove denied to every role, granted to each object's owner.
    private func ownerOnly(_ table: String, _ cluster: TestCluster) async throws {
        for operation in ["FIND", "UPDATE", "REMOVE"] {
            let deny = try await cluster.send(
                .PUT, "/data/\(table)/permissions/DENY", #"{"permission": "\#(operation)", "role": "*"}"#,
                key: .serverCode)
            let owner = try await cluster.send(
                .PUT, "/data/\(table)/permissions/owner/GRANT", #"{"permission": "\#(operation)"}"#, key: .serverCode)
            #expect(deny.status == 200 && owner.status == 200, "\(operation): \(deny.text) \(owner.text)")
        }
    }
}
