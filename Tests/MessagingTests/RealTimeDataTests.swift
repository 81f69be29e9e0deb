import DataEngine
import Foundation
import InternalProtocol
import PostgresNIO
import PostgresSupport
import TestSupport
import Testing

/// Real-time data change events (`OBJECTS_CHANGES`) through the gateway with PyPI's
/// python-socketio: all six events, where clauses on the new (or, for deletes, the old) state,
/// bulk events matched by clause, exact payloads, read access per subscriber and per object,
/// and refusals.
@Suite(.timeLimit(.minutes(20))) struct RealTimeDataTests {
    @Test func everyEventKindReachesTheSubscriptionsWhoseClauseItMatches() async throws {
        try await TestCluster.with { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Person", #"{"name": "seed", "age": 1}"#)
            _ = try await cluster.send(.POST, "/data/Other", #"{"x": 1}"#)
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: cluster.app.keys[.js]!) {
                client in
                try client.subscribe("A", "created", "Person")
                try client.subscribe("B", "created", "person", where: "age > 20")
                try client.subscribe("U", "updated", "Person", where: "name = 'bar' and age > 20")
                try client.subscribe("D", "deleted", "Person", where: "age > 20")
                try client.subscribe("BC", "bulk-created", "Person")
                try client.subscribe("BCW", "bulk-created", "Person", where: "age >= 32")
                try client.subscribe("BU", "bulk-updated", "Person", where: "age > 30")
                try client.subscribe("BD", "bulk-deleted", "Person")
                try client.subscribe("X", "created", "Other")
                try await client.ready(["A", "B", "U", "D", "BC", "BCW", "BU", "BD", "X"])

                let bob = try await cluster.send(.POST, "/data/Person", #"{"name": "Bob", "age": 10}"#).json
                let joe = try await cluster.send(.POST, "/data/Person", #"{"name": "Joe", "age": 30}"#).json
                let bobID = try #require(bob["objectId"] as? String)
                let joeID = try #require(joe["objectId"] as? String)
                let renamed = try await cluster.send(.PUT, "/data/Person/\(bobID)", #"{"name": "bar", "age": 45}"#).json
                _ = try await cluster.send(.PUT, "/data/Person/\(joeID)", #"{"name": "bar", "age": 5}"#)
                #expect(try await cluster.send(.DELETE, "/data/Person/\(joeID)").status == 200)
                #expect(try await cluster.send(.DELETE, "/data/Person/\(bobID)").status == 200)
                let bulk = try await cluster.send(.POST, "/data/bulk/Person", #"[{"age": 31}, {"age": 32}]"#)
                let bulkIDs = try #require(try JSONSerialization.jsonObject(with: Data(bulk.text.utf8)) as? [String])
                #expect(
                    try await cluster.send(.PUT, "/data/bulk/Person?where=age%20%3E%2030", #"{"name": "z"}"#).text
                        == "2")
                #expect(
                    try await cluster.send(.PUT, "/data/bulk/Person?where=age%20%3E%200", #"{"name": "y"}"#).text == "3"
                )
                #expect(try await cluster.send(.DELETE, "/data/bulk/Person?where=age%20%3E%200").text == "3")
                _ = try await cluster.send(.POST, "/data/Other", #"{"x": 2}"#)

                try await client.wait { _ in (try? client.data("X").count) == 1 && (try? client.data("BD").count) == 1 }
                // Created: every object, in commit order, exactly as REST answered.
                let created = try client.data("A").compactMap { $0 as? [String: Any] }
                #expect(created.count == 2 && NSDictionary(dictionary: created[0]) == NSDictionary(dictionary: bob))
                #expect(created.count == 2 && NSDictionary(dictionary: created[1]) == NSDictionary(dictionary: joe))
                #expect(try client.data("B").compactMap { ($0 as? [String: Any])?["objectId"] as? String } == [joeID])
                // Updated: tested on the new state; Joe's update to age 5 does not match.
                let updated = try client.data("U").compactMap { $0 as? [String: Any] }
                #expect(updated.count == 1 && NSDictionary(dictionary: updated[0]) == NSDictionary(dictionary: renamed))
                // Deleted: tested on the state before the delete (Joe was 5, Bob 45), only the id sent.
                let deleted = try client.data("D").compactMap { $0 as? [String: Any] }
                #expect(deleted.map { $0["objectId"] as? String } == [bobID] && deleted.first?["age"] == nil)
                #expect(try client.data("BC").compactMap { $0 as? [String] } == [bulkIDs])
                #expect(try client.data("BCW").compactMap { $0 as? [String] } == [[bulkIDs[1]]])
                // Bulk updates reach a subscription whose clause is the operation's.
                let bulkUpdated = try client.data("BU").compactMap { $0 as? [String: Any] }
                #expect(
                    bulkUpdated.count == 1 && bulkUpdated.first?["whereClause"] as? String == "age > 30"
                        && bulkUpdated.first?["count"] as? Int == 2)
                let bulkDeleted = try client.data("BD").compactMap { $0 as? [String: Any] }
                #expect(
                    bulkDeleted.first?["whereClause"] as? String == "age > 0"
                        && bulkDeleted.first?["count"] as? Int == 3)
                #expect(try client.data("X").compactMap { ($0 as? [String: Any])?["x"] as? Int } == [2])
            }
        }
    }

    @Test func subscribersReceiveOnlyWhatTheyMayRead() async throws {
        try await TestCluster.with { cluster async throws in
            let bob = try await cluster.account("bob@example.com")
            _ = try await cluster.send(.POST, "/data/Doc", #"{"n": 0}"#)
            _ = try await cluster.send(.POST, "/data/Public", #"{"n": 0}"#)
            _ = try await cluster.send(.POST, "/data/Secret", #"{"n": 0}"#)
            #expect(
                try await cluster.send(
                    .PUT, "/data/Secret/permissions/DENY", #"{"permission": "FIND", "role": "NotAuthenticatedUser"}"#,
                    key: .serverCode
                ).status == 200)
            let shared = try #require(
                try await cluster.send(.POST, "/data/Doc", #"{"n": 1}"#).json["objectId"] as? String)
            let other = try #require(
                try await cluster.send(.POST, "/data/Doc", #"{"n": 2}"#).json["objectId"] as? String)
            let denyUsers = #"{"permission": "FIND", "role": "AuthenticatedUser"}"#
            #expect(
                try await cluster.send(.PUT, "/data/Doc/permissions/DENY", denyUsers, key: .serverCode).status == 200)
            let denyGuests = #"{"permission": "FIND", "role": "NotAuthenticatedUser"}"#
            #expect(
                try await cluster.send(.PUT, "/data/Doc/permissions/DENY", denyGuests, key: .serverCode).status == 200)
            #expect(
                try await cluster.send(
                    .PUT, "/data/Doc/permissions/owner/GRANT", #"{"permission": "FIND"}"#, key: .serverCode
                ).status == 200)
            let grantBob = #"{"permission": "FIND", "user": "\#(bob.id)"}"#
            #expect(
                try await cluster.send(.PUT, "/data/Doc/permissions/GRANT/\(shared)", grantBob, key: .serverCode).status
                    == 200)

            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: cluster.app.keys[.js]!) {
                guest in
                try await RTClient.with(
                    gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: cluster.app.keys[.js]!, token: bob.token
                ) { member in
                    // Where no row layer can let a guest read, the subscription is refused
                    // outright, as a find would be; on Doc an object ACL might, so it is accepted.
                    try guest.subscribe("Z", "created", "Secret")
                    try await guest.wait { _ in (try? guest.payloads("SUB_RES", id: "Z").isEmpty) == false }
                    #expect(
                        (try guest.payloads("SUB_RES", id: "Z").first?["error"] as? [String: Any])?["code"] as? Int
                            == 1023)
                    try guest.subscribe("G", "created", "Doc")
                    try guest.subscribe("P", "created", "Public")
                    try await guest.ready(["G", "P"])

                    try member.subscribe("C", "created", "Doc")
                    try member.subscribe("U", "updated", "Doc")
                    try member.subscribe("BU", "bulk-updated", "Doc")
                    try await member.ready(["C", "U", "BU"])
                    // The owner policy admits Bob's own objects, an object ACL the shared one.
                    _ = try await cluster.send(.POST, "/data/Doc", #"{"n": 3}"#)
                    let mine = try #require(
                        try await cluster.send(.POST, "/data/Doc", #"{"n": 4}"#, token: bob.token).json["objectId"]
                            as? String)
                    _ = try await cluster.send(.PUT, "/data/Doc/\(other)", #"{"n": 20}"#)
                    _ = try await cluster.send(.PUT, "/data/Doc/\(shared)", #"{"n": 10}"#)
                    #expect(
                        try await cluster.send(.PUT, "/data/bulk/Doc?where=n%20%3E%3D%200", #"{"n": 7}"#).text == "5")
                    try await member.wait { _ in (try? member.data("BU").count) == 1 }
                    #expect(
                        try member.data("C").compactMap { ($0 as? [String: Any])?["objectId"] as? String } == [mine])
                    #expect(
                        try member.data("U").compactMap { ($0 as? [String: Any])?["objectId"] as? String } == [shared])
                    #expect(
                        (try member.data("BU").first as? [String: Any])?["count"] as? Int == 2,
                        "only the readable objects are counted")
                    // Events reach a connection in commit order: once the guest has the write to
                    // Public that came last, it has had every Doc event it was going to get.
                    _ = try await cluster.send(.POST, "/data/Public", #"{"n": 1}"#)
                    try await guest.wait { _ in (try? guest.data("P").count) == 1 }
                    #expect(try guest.data("G").isEmpty, "no object of Doc is readable by a guest")
                }
            }
        }
    }

    /// An announcement that never arrives (a listener that lost its connection at the wrong
    /// moment) delays an event by at most the feeds' periodic read, never loses it.
    @Test func anEventWhoseAnnouncementIsLostStillArrives() async throws {
        try await TestCluster.with { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Item", #"{"n": 0}"#)
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: cluster.app.keys[.js]!) {
                client in
                try client.subscribe("S", "created", "Item")
                try await client.ready(["S"])
                // Logged as the relay logs an event, but not announced.
                let event =
                    #"{"event": "created", "object": {"___class": "Item", "objectId": "quiet", "n": 7, "created": 1, "updated": null, "ownerId": null}}"#
                try await PostgresClient.with(cluster.database, logger: TestDatabase.logger) { database in
                    _ = try await database.query(
                        """
                        INSERT INTO messaging.change_log (commit_lsn, index, app_id, table_name, event)
                        VALUES ((pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint + 1, 1, \(cluster.app.id), 'Item', \(event))
                        """, logger: TestDatabase.logger
                    ).collect()
                }
                try await client.wait { _ in (try? client.integers("S", "n")) == [7] }
            }
        }
    }

    @Test func subscriptionsThatCannotBeServedAreRefused() async throws {
        try await TestCluster.with { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Person", #"{"name": "seed", "age": 1, "meta": {"a": 1}}"#)
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: cluster.app.keys[.rest]!)
            { client in
                let refusals: [(String, String, Int)] = [
                    ("T", #"{"event": "created", "tableName": "Persn"}"#, 1009),
                    ("W", #"{"event": "created", "tableName": "Person", "whereClause": "age >"}"#, 1017),
                    ("C", #"{"event": "created", "tableName": "Person", "whereClause": "nope = 1"}"#, 1011),
                    ("R", #"{"event": "created", "tableName": "Person", "whereClause": "friend.name = 'x'"}"#, 1019),
                    ("J", #"{"event": "created", "tableName": "Person", "whereClause": "meta IS NULL"}"#, 1019),
                    ("E", #"{"event": "exploded", "tableName": "Person"}"#, 5023),
                    ("N", #"{"event": "created"}"#, 5023),
                    ("Y", #"{"event": "created", "tableName": "Person", "whereClause": 5}"#, 5023),
                ]
                for (id, options, _) in refusals {
                    try client.emit("SUB_ON", #"{"id": "\#(id)", "name": "OBJECTS_CHANGES", "options": \#(options)}"#)
                }
                try client.subscribe("OK", "created", "Person", where: "age > 0")
                try await client.ready(["OK"])
                try await client.wait { _ in
                    refusals.allSatisfy { (try? client.payloads("SUB_RES", id: $0.0).isEmpty) == false }
                }
                for (id, _, code) in refusals {
                    let error = try client.payloads("SUB_RES", id: id).first?["error"] as? [String: Any]
                    #expect(
                        error?["code"] as? Int == code && error?["message"] is String,
                        "\(id): \(String(describing: error))")
                }
                // The connection and its valid subscription are unaffected.
                _ = try await cluster.send(.POST, "/data/Person", #"{"name": "next", "age": 2}"#)
                try await client.wait { _ in (try? client.data("OK").count) == 1 }
            }
        }
    }
}
