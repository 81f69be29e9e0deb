import DataEngine
import Foundation
import InternalProtocol
import PostgresNIO
import TestSupport
import Testing

/// `POST /transaction/unit-of-work`: every data operation type, `___ref` references, isolation
/// levels, the success and failure envelopes, and rollback of everything on failure.
@Suite(.timeLimit(.minutes(20))) struct UnitOfWorkTests {
    /// Runs a unit of work written as JSON and decodes its envelope.
    private func run(_ fixture: EngineFixture, _ json: String) async throws -> [String: Any] {
        let work = try UnitOfWork(body: try JSONParser.parse(json))
        let envelope = try await fixture.engine.execute(work, identity: fixture.rest, logger: fixture.logger)
        return try fixture.decode(envelope.jsonText)
    }

    private func result(_ envelope: [String: Any], _ id: String) -> Any? {
        ((envelope["results"] as? [String: Any])?[id] as? [String: Any])?["result"]
    }

    @Test func everyOperationTypeWithReferences() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Person", #"{"name": "Seed", "age": 50}"#)
            // A unit of work changes no schema: the tables and columns it writes exist first.
            for (table, columns) in [("Person", ["name", "age"]), ("Note", ["about", "label"])] {
                try await fixture.engine.ensure(
                    table: table, columns: columns.map { ColumnSchema(name: $0, type: $0 == "age" ? .int : .string) },
                    appID: fixture.appID, logger: fixture.logger)
            }
            let envelope = try await run(
                fixture,
                #"""
                {"isolationLevelEnum": "REPEATABLE_READ", "operations": [
                 {"operationType": "CREATE", "table": "Person", "opResultId": "ann", "payload": {"name": "Ann", "age": 30}},
                 {"operationType": "CREATE_BULK", "table": "Person", "opResultId": "bulk",
                  "payload": [{"name": "B1", "age": 1}, {"name": "B2", "age": 2}]},
                 {"operationType": "UPDATE", "table": "Person", "opResultId": "annOlder",
                  "payload": {"objectId": {"___ref": true, "opResultId": "ann", "propName": "objectId"}, "age": 31}},
                 {"operationType": "UPSERT", "table": "Person", "opResultId": "up", "payload": {"objectId": "fixed-id", "name": "Up", "age": 5}},
                 {"operationType": "UPSERT_BULK", "table": "Person", "opResultId": "upBulk",
                  "payload": [{"objectId": "fixed-id", "age": 6}, {"name": "New", "age": 7}]},
                 {"operationType": "UPDATE_BULK", "table": "Person", "opResultId": "bump",
                  "payload": {"changes": {"age": {"___class": "BackendlessExpression", "value": "age + 100"}},
                              "unconditional": {"___ref": true, "opResultId": "bulk"}}},
                 {"operationType": "UPDATE_BULK", "table": "Person", "opResultId": "renew",
                  "payload": {"changes": {"age": 70}, "conditional": "name = 'New'"}},
                 {"operationType": "FIND", "table": "Person", "opResultId": "found",
                  "payload": {"whereClause": "age > 100", "sortBy": ["name"], "properties": ["name", "age", "objectId"], "pageSize": 10}},
                 {"operationType": "CREATE", "table": "Note", "opResultId": "note",
                  "payload": {"about": {"___ref": true, "opResultId": "found", "resultIndex": 1, "propName": "objectId"},
                              "label": "second"}},
                 {"operationType": "UPDATE", "table": "Note", "opResultId": "noteLabel",
                  "payload": {"objectId": {"___ref": true, "opResultId": "note", "propName": "objectId"},
                              "label": {"___ref": true, "opResultId": "found", "resultIndex": 0, "propName": "name"}}},
                 {"operationType": "DELETE", "table": "Person", "opResultId": "gone", "payload": {"___ref": true, "opResultId": "ann"}},
                 {"operationType": "DELETE_BULK", "table": "Person", "opResultId": "goneBulk",
                  "payload": {"unconditional": {"___ref": true, "opResultId": "found"}}},
                 {"operationType": "DELETE_BULK", "table": "Person", "opResultId": "goneNew", "payload": {"conditional": "name = 'New'"}}
                ]}
                """#)
            #expect(envelope["success"] as? Bool == true, "\(envelope)")
            #expect(envelope["error"] is NSNull)
            let ann = try #require(result(envelope, "ann") as? [String: Any])
            #expect(ann["name"] as? String == "Ann" && ann["___class"] as? String == "Person")
            #expect((result(envelope, "bulk") as? [String])?.count == 2)
            #expect((result(envelope, "annOlder") as? [String: Any])?["age"] as? Int == 31)
            #expect((result(envelope, "up") as? [String: Any])?["objectId"] as? String == "fixed-id")
            #expect((result(envelope, "upBulk") as? [String])?.first == "fixed-id")
            #expect(result(envelope, "bump") as? Int == 2)
            #expect(result(envelope, "renew") as? Int == 1)
            let found = try #require(result(envelope, "found") as? [[String: Any]])
            #expect(found.map { $0["name"] as? String } == ["B1", "B2"])
            #expect(found.map { $0["age"] as? Int } == [101, 102])
            let note = try #require(result(envelope, "noteLabel") as? [String: Any])
            #expect(note["about"] as? String == found[1]["objectId"] as? String)
            #expect(note["label"] as? String == "B1")
            #expect((result(envelope, "gone") as? Int ?? 0) > 1_600_000_000_000)
            #expect(result(envelope, "goneBulk") as? Int == 2)
            #expect(result(envelope, "goneNew") as? Int == 1)
            let remaining = try await fixture.find("Person", [("sortBy", "name")]).map { $0["name"] as? String }
            #expect(remaining == ["Seed", "Up"])
            let resultIds = try #require(envelope["results"] as? [String: Any]).keys.sorted()
            #expect(resultIds.count == 13)
        }
    }

    @Test func aFailureRollsBackEverythingAndNamesTheOperation() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Person", #"{"name": "Seed", "age": 50}"#)
            let envelope = try await run(
                fixture,
                #"""
                {"operations": [
                 {"operationType": "CREATE", "table": "Person", "payload": {"name": "Ann", "age": 30}},
                 {"operationType": "UPDATE_BULK", "table": "Person", "payload": {"changes": {"age": 1}, "conditional": "age > 0"}},
                 {"operationType": "UPDATE", "table": "Person", "payload": {"objectId": "no-such-id", "age": 2}},
                 {"operationType": "CREATE", "table": "Person", "payload": {"name": "Never"}}
                ]}
                """#)
            #expect(envelope["success"] as? Bool == false)
            #expect(envelope["results"] is NSNull)
            let error = try #require(envelope["error"] as? [String: Any])
            #expect(error["code"] as? Int == 1000)
            #expect(error["message"] as? String == "Entity with ID no-such-id not found")
            let operation = try #require(error["operation"] as? [String: Any])
            #expect(operation["opResultId"] as? String == "updatePerson1")
            #expect(operation["operationType"] as? String == "UPDATE" && operation["table"] as? String == "Person")
            #expect((operation["payload"] as? [String: Any])?["objectId"] as? String == "no-such-id")
            let rows = try await fixture.find("Person", [])
            #expect(rows.map { $0["name"] as? String } == ["Seed"])
            #expect(rows.map { $0["age"] as? Int } == [50])
        }
    }

    @Test func schemaAndBulkRefusalsUseBackendlessWords() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Person", #"{"name": "Seed"}"#)
            let missing = try await run(
                fixture,
                #"{"operations": [{"operationType": "CREATE", "table": "Person", "payload": {"name": "x", "colour": "red"}}]}"#
            )
            #expect(
                (missing["error"] as? [String: Any])?["message"] as? String
                    == "Column 'colour' in table 'Person' does not exists. All tables and columns must be present in the database before a transaction is executed."
            )
            let objects = (0...100).map { _ in #"{"name": "n"}"# }.joined(separator: ",")
            let bulk = try await run(
                fixture,
                #"{"operations": [{"operationType": "CREATE_BULK", "table": "Person", "payload": [\#(objects)]}]}"#)
            let error = try #require(bulk["error"] as? [String: Any])
            #expect(
                error["code"] as? Int == 1021
                    && error["message"] as? String == "Bulk create operation supports no more than 100 objects")
            #expect(try await fixture.rowCount("Person") == 1)
            let catalog = try await fixture.engine.cache.catalog(for: fixture.appID)
            #expect(catalog.table(named: "Person")?.column(named: "colour") == nil)
        }
    }

    @Test func failuresOfEveryKindAreEnvelopes() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Person", #"{"name": "Seed", "age": 50}"#)
            let cases: [(operation: String, code: Int)] = [
                (#"{"operationType": "CREATE", "table": "Person", "payload": {"age": "old"}}"#, 1012),
                (#"{"operationType": "CREATE", "table": "Person", "payload": [1]}"#, 1022),
                (
                    #"{"operationType": "DELETE", "table": "Person", "payload": {"___ref": true, "opResultId": "later"}}"#,
                    1022
                ),
                (
                    #"{"operationType": "DELETE", "table": "Person", "payload": {"___ref": true, "opResultId": "seed", "resultIndex": 3}}"#,
                    1022
                ),
                (#"{"operationType": "DELETE_BULK", "table": "Person", "payload": {"conditional": "age >"}}"#, 1017),
                (#"{"operationType": "DELETE_BULK", "table": "Person", "payload": {}}"#, 1022),
                (
                    #"{"operationType": "UPDATE_BULK", "table": "Missing", "payload": {"changes": {"a": 1}, "conditional": "a = 1"}}"#,
                    1009
                ),
                (#"{"operationType": "FIND", "table": "Person", "payload": {"whereClause": "nope = 1"}}"#, 1011),
                // A unit of work never adds a table or a column.
                (
                    #"{"operationType": "UPDATE", "table": "Person", "payload": {"objectId": "x", "nick": {"___ref": true, "opResultId": "seed", "resultIndex": 0, "propName": "name"}}}"#,
                    1011
                ),
                (#"{"operationType": "CREATE", "table": "Person", "payload": {"name": "x", "colour": "red"}}"#, 1011),
                (#"{"operationType": "CREATE", "table": "Brand", "payload": {"name": "x"}}"#, 1009),
                (
                    #"{"operationType": "ADD_RELATION", "table": "Person", "payload": {"parentObject": "x", "relationColumn": "r", "unconditional": []}}"#,
                    1011
                ),
                (
                    #"{"operationType": "SET_RELATION", "table": "Person", "payload": {"parentObject": "x", "relationColumn": "r"}}"#,
                    1022
                ),
            ]
            for (operation, code) in cases {
                let envelope = try await run(
                    fixture,
                    #"{"operations": [{"operationType": "FIND", "table": "Person", "opResultId": "seed", "payload": {}}, \#(operation)]}"#
                )
                let error = try #require(envelope["error"] as? [String: Any], "\(operation) → \(envelope)")
                #expect(
                    envelope["success"] as? Bool == false && error["code"] as? Int == code, "\(operation) → \(envelope)"
                )
                let failed = try #require(error["operation"] as? [String: Any])
                #expect(failed["opResultId"] as? String != "seed")
            }
            #expect(try await fixture.rowCount("Person") == 1)
        }
    }

    @Test func requestsThatAreNoUnitOfWorkAreRefused() throws {
        let bodies = [
            #"[]"#, #"{}"#, #"{"operations": []}"#, #"{"operations": [1]}"#,
            #"{"operations": [{"operationType": "MERGE", "table": "T", "payload": {}}]}"#,
            #"{"operations": [{"operationType": "CREATE", "payload": {}}]}"#,
            #"{"isolationLevelEnum": "CHAOS", "operations": [{"operationType": "CREATE", "table": "T", "payload": {}}]}"#,
            #"{"operations": [{"operationType": "CREATE", "table": "T", "opResultId": "a", "payload": {}}, {"operationType": "CREATE", "table": "T", "opResultId": "a", "payload": {}}]}"#,
        ]
        for body in bodies {
            let error = #expect(throws: ErrorEnvelope.self, "\(body)") {
                _ = try UnitOfWork(body: try JSONParser.parse(body))
            }
            #expect(error?.code == 1022 && error?.status == 400)
        }
    }

    @Test func isolationLevelsAndDefaultNames() throws {
        let levels: [(String, DatabaseSession.IsolationLevel)] = [
            ("READ_UNCOMMITTED", .readUncommitted), ("READ_COMMITTED", .readCommitted),
            ("REPEATABLE_READ", .repeatableRead), ("SERIALIZABLE", .serializable), ("SERIALZABLE", .serializable),
        ]
        for (name, level) in levels {
            let work = try UnitOfWork(
                body: try JSONParser.parse(
                    #"{"isolationLevelEnum": "\#(name)", "operations": [{"operationType": "CREATE", "table": "T", "payload": {}}]}"#
                ))
            #expect(work.isolation == level)
        }
        let work = try UnitOfWork(
            body: try JSONParser.parse(
                #"""
                {"operations": [{"operationType": "CREATE", "table": "Person", "payload": {}},
                 {"operationType": "CREATE", "table": "Person", "payload": {}},
                 {"operationType": "UPDATE_BULK", "table": "Person", "payload": {}},
                 {"operationType": "CREATE", "table": "Order", "payload": {}}]}
                """#))
        #expect(work.isolation == .readCommitted)
        #expect(
            work.operations.map(\.opResultId) == [
                "createPerson1", "createPerson2", "update_bulkPerson1", "createOrder1",
            ])
    }

    @Test func transactionsRunAtTheRequestedIsolationLevel() async throws {
        try await EngineFixture.with { fixture in
            let session = DatabaseSession(pool: fixture.database, logger: fixture.logger)
            for level in [DatabaseSession.IsolationLevel.readCommitted, .repeatableRead, .serializable] {
                let shown = try await session.transaction(isolation: level) { session in
                    try await session.column(SQL("SHOW transaction_isolation"), as: String.self).first
                }
                #expect(shown?.uppercased() == level.rawValue)
            }
        }
    }

    @Test func concurrentUnitsOfWorkLoseNoUpdate() async throws {
        try await EngineFixture.with { fixture in
            let counter = try await fixture.create("Counter", #"{"hits": 0}"#)
            let id = try #require(counter["objectId"] as? String)
            _ = try await fixture.engine.addColumns(
                "Log", columns: [ColumnSchema(name: "counter", type: .string)], identity: fixture.serverCode,
                logger: fixture.logger)
            let json = #"""
                {"operations": [{"operationType": "UPDATE", "table": "Counter",
                  "payload": {"objectId": "\#(id)", "hits": {"___class": "BackendlessExpression", "value": "hits + 1"}}},
                 {"operationType": "CREATE", "table": "Log", "payload": {"counter": "\#(id)"}}]}
                """#
            _ = try await run(fixture, json)
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<19 { group.addTask { try await run(fixture, json)["success"] as? Bool == true } }
                for try await succeeded in group { #expect(succeeded) }
            }
            let rows = try await fixture.find("Counter", [])
            #expect(rows.first?["hits"] as? Int == 20)
            #expect(try await fixture.rowCount("Log") == 20)
        }
    }
}
