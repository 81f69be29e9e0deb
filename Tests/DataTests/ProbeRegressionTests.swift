import Foundation
import InternalProtocol
import NIOHTTP1
import PostgresNIO
import PostgresSupport
import TestSupport
import Testing

@testable import DataEngine

/// The attacker's probe's data-service reproductions: a date no PostgreSQL timestamp can hold
/// (it trapped in PostgresNIO's Date encoding and took the process down), and a table filled with
/// columns by one anonymous save (later saves then failed with 500).
@Suite(.timeLimit(.minutes(20))) struct ProbeRegressionTests {
    private static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    @Test func timestampRangeIsPostgreSQLs() {
        #expect(TimestampRange.date(milliseconds: 0) != nil)
        #expect(TimestampRange.date(milliseconds: -210_866_803_200_000) != nil)
        #expect(TimestampRange.date(milliseconds: -210_866_803_200_001) == nil)
        #expect(TimestampRange.date(milliseconds: 9_224_318_015_999_000) != nil)
        #expect(TimestampRange.date(milliseconds: 9_224_318_016_000_000) == nil)
        #expect(TimestampRange.date(milliseconds: 1e17) == nil)
        #expect(TimestampRange.date(milliseconds: .infinity) == nil)
        #expect(TimestampRange.date(milliseconds: .nan) == nil)
        #expect(TimestampRange.microseconds(Date(timeIntervalSince1970: 1e300)) == nil)
        #expect(TimestampRange.microseconds(Date(timeIntervalSince1970: 1)) == 1_000_000)
        // The last guard, at the bind: nothing out of range reaches PostgresNIO's conversion.
        #expect(TimestampRange.clamped(Date(timeIntervalSince1970: 1e300)).timeIntervalSince1970 < 9_224_318_016_000)
        #expect(TimestampRange.clamped(Date(timeIntervalSince1970: .nan)).timeIntervalSince1970 == 0)
        for literal: JSONValue in [.integer(99_999_999_999_999_999), .number(-1e300), .string("99999999999999999")] {
            #expect(ValueEncoding.encode(literal, as: .datetime) == nil, "\(literal)")
        }
    }

    /// A value PostgreSQL refuses while evaluating a query (a division by zero, an overflow)
    /// answers 1017 in this project's words: no text of the database's reaches the client.
    @Test func valueErrorsWhileQueryingAreOurWordsNotTheDatabases() async throws {
        try await TestCluster.shared { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Sums", #"{"n": 3, "big": 9000000000000000000}"#)
            let cases = [
                ("n / 0 = 1", "Invalid value: the query divides by zero for some object"),
                ("n % 0 = 1", "Invalid value: the query divides by zero for some object"),
                ("big * 1000 > 1", "Invalid value: a value is out of range or not of the property's type"),
            ]
            for (clause, message) in cases {
                let answer = try await cluster.send(.GET, "/data/Sums?where=" + Self.encoded(clause))
                #expect(answer.status == 400, "\(clause): \(answer.text)")
                #expect(
                    answer.json["code"] as? Int == 1017 && answer.json["message"] as? String == message,
                    "\(answer.text)")
            }
        }
    }

    @Test func datesBeyondPostgreSQLsRangeAreClientErrorsOnEveryPath() async throws {
        try await TestCluster.shared { cluster async throws in
            let huge = "99999999999999999"
            #expect(
                try await cluster.send(
                    .POST, "/data/T/schema", #"{"name": "when", "type": "DATETIME"}"#, key: .serverCode
                ).status == 200)
            let id = try #require(try await cluster.send(.POST, "/data/T", #"{"n": 1}"#).json["objectId"] as? String)
            var refusals: [(String, HTTPResult)] = []
            for clause in ["created > \(huge)", "created < -\(huge)", "when > 1e300", "updated = '\(huge)'"] {
                refusals.append((clause, try await cluster.send(.GET, "/data/T?where=" + Self.encoded(clause))))
            }
            refusals.append(("update", try await cluster.send(.PUT, "/data/T/\(id)", #"{"when": \#(huge)}"#)))
            refusals.append(("create", try await cluster.send(.POST, "/data/T", #"{"when": -1e300}"#)))
            refusals.append(
                ("bulk", try await cluster.send(.PUT, "/data/bulk/T?where=n%3D1", #"{"when": "\#(huge)"}"#)))
            let (user, _) = try await cluster.account("victim@example.com")
            refusals.append(
                (
                    "Users",
                    try await cluster.send(.PUT, "/data/Users/\(user)", #"{"lastLogin": \#(huge)}"#, key: .serverCode)
                ))
            for (what, answer) in refusals {
                #expect(answer.status == 400 && answer.json["code"] is Int, "\(what): \(answer.status) \(answer.text)")
            }
            let work =
                #"{"operations": [{"operationType": "UPDATE", "table": "T", "payload": {"objectId": "\#(id)", "when": \#(huge)}}]}"#
            let unit = try await cluster.send(.POST, "/transaction/unit-of-work", work)
            #expect(unit.json["success"] as? Bool == false, "\(unit.text)")
            _ = try await cluster.send(.POST, "/data/T/\(id)/friends:T:n", #"["\#(id)"]"#)
            let related = try await cluster.send(
                .GET, "/data/T/\(id)/friends?where=" + Self.encoded("created > \(huge)"))
            #expect(related.status == 400, "\(related.text)")
            // Every service still answers: nothing trapped.
            #expect(try await cluster.send(.GET, "/data/T/\(id)").status == 200)
            #expect(try await cluster.send(.GET, "/data/T/\(id)/friends").status == 200)
        }
    }

    @Test func oneSaveCannotFillATableWithColumns() async throws {
        try await TestCluster.shared { cluster async throws in
            let (_, token) = try await cluster.account("owner@example.com")
            let id = try #require(
                try await cluster.send(.POST, "/data/Wide", #"{"a": 1}"#, token: token).json["objectId"] as? String)
            func object(_ count: Int, prefix: String) -> String {
                "{" + (0..<count).map { #""\#(prefix)\#($0)": 1"# }.joined(separator: ", ") + "}"
            }
            let many = try await cluster.send(.POST, "/data/Wide", object(1_500, prefix: "c"))
            #expect(many.status == 400 && many.json["code"] as? Int == 1031, "\(many.status) \(many.text.prefix(200))")
            let update = try await cluster.send(.PUT, "/data/Wide/\(id)", object(101, prefix: "u"))
            #expect(update.status == 400 && update.json["code"] as? Int == 1031, "\(update.text.prefix(200))")
            // A write that adds a column and then fails commits neither.
            let mistyped = try await cluster.send(.POST, "/data/Wide", #"{"fresh": 1, "a": "not a number"}"#)
            #expect(mistyped.status == 400 && mistyped.json["code"] as? Int == 1012, "\(mistyped.text)")
            let mistypedUpdate = try await cluster.send(
                .PUT, "/data/Wide/\(id)", #"{"fresher": 1, "a": "x"}"#, token: token)
            #expect(
                mistypedUpdate.status == 400 && mistypedUpdate.json["code"] as? Int == 1012, "\(mistypedUpdate.text)")
            // Nothing of the refused writes was kept: no column of theirs exists.
            let schema = try await cluster.send(.GET, "/data/Wide/properties", key: .serverCode)
            let columns = (try JSONSerialization.jsonObject(with: Data(schema.text.utf8)) as? [[String: Any]]) ?? []
            let names = Set(columns.compactMap { $0["name"] as? String })
            #expect(names.contains("a") && !names.contains("c0") && !names.contains("u0"), "\(schema.text.prefix(300))")
            #expect(!names.contains("fresh") && !names.contains("fresher"), "\(schema.text.prefix(300))")
            // A write within the limit still works, and so do later saves.
            #expect(try await cluster.send(.POST, "/data/Wide", object(100, prefix: "k")).status == 200)
            #expect(try await cluster.send(.PUT, "/data/Wide/\(id)", #"{"a": 2}"#, token: token).status == 200)
        }
    }

    /// The second probe's F12: on a table made owner-only as the README says (Find, Update and
    /// Remove denied to `*` and granted to the owner) but with Permission left at its default,
    /// a stranger who knew an id granted himself, or everyone, access to the object. Changing an
    /// object's ACL takes Update on it as well.
    @Test func aStrangerCannotOpenAnOwnerOnlyObjectThroughItsACL() async throws {
        try await TestCluster.shared { cluster async throws in
            let victim = try await cluster.account("victim@example.com")
            let attacker = try await cluster.account("attacker@example.com")
            #expect(
                try await cluster.send(
                    .POST, "/data/OwnOnly/schema", #"[{"name": "title", "type": "STRING"}]"#, key: .serverCode
                ).status == 200)
            for operation in ["FIND", "UPDATE", "REMOVE"] {
                let deny = try await cluster.send(
                    .PUT, "/data/OwnOnly/permissions/DENY", #"{"permission": "\#(operation)", "role": "*"}"#,
                    key: .serverCode)
                #expect(deny.status == 200, "\(deny.text)")
                let owner = try await cluster.send(
                    .PUT, "/data/OwnOnly/permissions/owner/GRANT", #"{"permission": "\#(operation)"}"#, key: .serverCode
                )
                #expect(owner.status == 200, "\(owner.text)")
            }
            let created = try await cluster.send(
                .POST, "/data/OwnOnly", #"{"title": "victim private"}"#, token: victim.token)
            let id = try #require(created.json["objectId"] as? String, "\(created.text)")

            let toAttacker = #"{"permission": "UPDATE", "user": "\#(attacker.id)"}"#
            let toEveryone = #"{"permission": "FIND", "role": "*"}"#
            for (body, token) in [(toAttacker, attacker.token), (toEveryone, nil), (toEveryone, attacker.token)] {
                let granted = try await cluster.send(.PUT, "/data/OwnOnly/permissions/GRANT/\(id)", body, token: token)
                #expect(granted.status == 403 && granted.json["code"] as? Int == 1023, "\(body): \(granted.text)")
            }
            let tampered = try await cluster.send(
                .PUT, "/data/OwnOnly/\(id)", #"{"title": "tampered"}"#, token: attacker.token)
            #expect(tampered.status == 403, "\(tampered.text)")
            #expect(try await cluster.send(.GET, "/data/OwnOnly/\(id)").status == 403)

            // The owner still shares the object, with one user or with everyone.
            let shared = try await cluster.send(
                .PUT, "/data/OwnOnly/permissions/GRANT/\(id)", toAttacker, token: victim.token)
            #expect(shared.status == 200, "\(shared.text)")
            let edited = try await cluster.send(
                .PUT, "/data/OwnOnly/\(id)", #"{"title": "shared edit"}"#, token: attacker.token)
            #expect(edited.status == 200, "\(edited.text)")
            let opened = try await cluster.send(
                .PUT, "/data/OwnOnly/permissions/GRANT/\(id)", toEveryone, token: victim.token)
            #expect(opened.status == 200, "\(opened.text)")
            let read = try await cluster.send(.GET, "/data/OwnOnly/\(id)")
            #expect(read.status == 200 && read.json["title"] as? String == "shared edit", "\(read.text)")
        }
    }

    /// The second probe's F10: values PostgreSQL cannot index (a unique column's, a QuickBlox
    /// parent reference's) answered 500; they are the client's error (400), on every write path,
    /// and nothing is half-written.
    @Test func valuesTooLargeToIndexAreClientErrors() async throws {
        try await TestCluster.shared { cluster async throws in
            let schema = #"[{"name": "code", "type": "STRING"}]"#
            #expect(try await cluster.send(.POST, "/data/Uniq/schema", schema, key: .serverCode).status == 200)
            let unique = try await cluster.send(
                .PUT, "/data/Uniq/properties/code", #"{"unique": true}"#, key: .serverCode)
            #expect(unique.status == 200, "\(unique.text)")
            let long = String((0..<10_000).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement()! })
            let object = #"{"code": "\#(long)"}"#
            let writes: [(String, String)] = [
                ("/data/Uniq", object), ("/data/bulk/Uniq", "[\(object)]"),
                ("/data/QBT", #"{"_parent_id": "\#(long)"}"#),
            ]
            for (path, body) in writes {
                let answer = try await cluster.send(.POST, path, body)
                #expect(
                    answer.status == 400 && answer.text.contains("too large"),
                    "\(path): \(answer.status) \(answer.text.prefix(200))")
            }
            let work =
                #"{"operations": [{"operationType": "CREATE", "table": "Uniq", "opResultId": "a", "payload": \#(object)}]}"#
            let unit = try await cluster.send(.POST, "/transaction/unit-of-work", work)
            #expect(
                unit.json["success"] as? Bool == false && unit.text.contains("too large"), "\(unit.text.prefix(300))")
            #expect(try await cluster.send(.GET, "/data/Uniq/count", key: .serverCode).text == "0")
        }
    }

    /// The second probe's F8: a statement left running after its caller's deadline kept a
    /// backend busy for half a minute. Pooled connections carry a statement limit; a statement
    /// past it stops and maps to a clean 504.
    @Test func statementsStopAtThePoolsLimit() async throws {
        try await TestDatabase.with { database async throws in
            var limited = database
            limited.statementTimeoutMilliseconds = 300
            let error = await #expect(throws: PSQLError.self) {
                try await PostgresClient.with(limited, logger: TestDatabase.logger) { client in
                    for try await _ in try await client.query("SELECT pg_sleep(60)", logger: TestDatabase.logger) {}
                }
            }
            #expect(error?.serverInfo?[.sqlState] == "57014")
            let mapped =
                DatabaseErrors.map(try #require(error), table: "T", logger: TestDatabase.logger) as? ErrorEnvelope
            #expect(mapped?.status == 504 && mapped?.message.contains("Error") != true, "\(String(describing: mapped))")
        }
    }

    /// The second probe's F4: a relation declared by a request that was then refused stayed
    /// declared (anyone could add link tables to `Users`), and relation columns escaped the
    /// column cap. A refused change leaves no column behind, and a table holds at most 100
    /// relations within its 1,000 properties.
    @Test func refusedRelationChangesDeclareNothing() async throws {
        try await TestCluster.shared { cluster async throws in
            let victim = try await cluster.account("victim@example.com")
            let attacker = try await cluster.account("attacker@example.com")
            let attempts: [(String, String?)] = [
                ("/data/Users/NOPE/anonrel5:Users:n", nil), ("/data/Users/NOPE/anonrel6:GeoPoint:n", nil),
                ("/data/Users/\(victim.id)/anonrel3:Users:1", nil),
                ("/data/Users/\(victim.id)/userrel:Users:n", attacker.token),
            ]
            for (path, token) in attempts {
                let refused = try await cluster.send(.PUT, path, "[]", token: token)
                #expect(refused.status == 403 && refused.json["code"] as? Int == 1023, "\(path): \(refused.text)")
            }
            let properties = try await cluster.send(.GET, "/data/Users/properties", key: .serverCode)
            #expect(properties.status == 200, "\(properties.text)")
            for name in ["anonrel5", "anonrel6", "anonrel3", "userrel"] {
                #expect(!properties.text.contains(name), "\(name): \(properties.text)")
            }
            // Declared by a change that is allowed, as before.
            let own = try await cluster.send(
                .PUT, "/data/Users/\(victim.id)/friends:Users:n", "[]", token: victim.token)
            #expect(own.status == 200, "\(own.text)")
            #expect(try await cluster.send(.GET, "/data/Users/properties", key: .serverCode).text.contains("friends"))
        }
    }

    @Test func relationColumnsCountTowardsTheColumnCap() throws {
        func table(columns: Int, relations: Int) -> TableSchema {
            TableSchema(
                name: "T",
                columns: ColumnSchema.system + (0..<columns).map { ColumnSchema(name: "c\($0)", type: .text) },
                relations: (0..<relations).map {
                    RelationSchema(name: "r\($0)", relatedTable: "T", isMany: true, linkTable: "l\($0)")
                })
        }
        try ColumnLimits.checkRelation(table(columns: 0, relations: 99))
        #expect(throws: ErrorEnvelope.self) { try ColumnLimits.checkRelation(table(columns: 0, relations: 100)) }
        let full = table(columns: ColumnLimits.perTable - ColumnSchema.system.count - 10, relations: 10)
        #expect(full.propertyCount == ColumnLimits.perTable)
        #expect(throws: ErrorEnvelope.self) { try ColumnLimits.checkRelation(full) }
        #expect(throws: ErrorEnvelope.self) {
            try ColumnLimits.checkTable(full.name, existing: full.propertyCount, adding: 1)
        }
    }

    /// Dates PostgreSQL stores past 294,247 AD overflow 64-bit microseconds: in memory they
    /// wrapped around and compared before the year 1970; they keep their order.
    @Test func theLatestStorableDatesCompareInOrder() {
        let lastStorable: Int64 = 9_224_318_015_999_999  // 294276-12-31 in ms (PostgreSQL's last timestamp)
        let dates: [Int64] = [
            -210_866_803_200_000, 0, 9_000_000_000_000_000, 9_223_372_036_854_775, 9_223_372_036_854_776, lastStorable,
        ]
        let scalars = dates.map { ObjectPredicate.Scalar(.integer($0), type: .datetime) }
        for (index, scalar) in scalars.enumerated().dropFirst() {
            #expect(
                ObjectPredicate.compare(scalars[index - 1], scalar) == -1, "\(dates[index - 1]) before \(dates[index])")
        }
    }
}
