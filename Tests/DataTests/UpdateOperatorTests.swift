import DataEngine
import Foundation
import InternalProtocol
import TestSupport
import Testing

/// The update operators: Backendless's JSON operations and the array and number operations
/// that cover QuickBlox's `inc push pull pull_all pop add_to_set` and set-by-index.
@Suite(.timeLimit(.minutes(20))) struct UpdateOperatorTests {
    static let start =
        #"{"doc": {"a": 1, "list": [1, 2], "nested": {"x": 1}}, "tags": [1, 2, 3, 2, "x"], "n": 10, "d": 1.5, "s": "text"}"#

    /// (column, operation, expected value afterwards)
    static let cases: [(String, String, String)] = [
        (
            "doc",
            #"{"___operation": "JSON_SET", "args": {"$.a": 2, "$.b": "new", "$.nested.y": true, "$.list[5]": 9, "$.missing.deep": 1}}"#,
            #"{"a": 2, "b": "new", "list": [1, 2, 9], "nested": {"x": 1, "y": true}}"#
        ),
        (
            "doc", #"{"___operation": "JSON_INSERT", "args": {"$.a": 5, "$.c": 3}}"#,
            #"{"a": 1, "c": 3, "list": [1, 2], "nested": {"x": 1}}"#
        ),
        (
            "doc", #"{"___operation": "JSON_REPLACE", "args": {"$.a": 5, "$.c": 3}}"#,
            #"{"a": 5, "list": [1, 2], "nested": {"x": 1}}"#
        ),
        (
            "doc", #"{"___operation": "JSON_REMOVE", "args": ["$.a", "$.list[0]"]}"#,
            #"{"list": [2], "nested": {"x": 1}}"#
        ),
        (
            "doc", #"{"___operation": "JSON_ARRAY_APPEND", "args": {"$.list": 3, "$.a": 4}}"#,
            #"{"a": [1, 4], "list": [1, 2, 3], "nested": {"x": 1}}"#
        ),
        (
            "doc", #"{"___operation": "JSON_ARRAY_INSERT", "args": {"$.list[1]": 7}}"#,
            #"{"a": 1, "list": [1, 7, 2], "nested": {"x": 1}}"#
        ),
        (
            "doc", #"{"___operation": "JSON_SET", "args": {"$.\"odd key\"": 1}}"#,
            #"{"a": 1, "list": [1, 2], "nested": {"x": 1}, "odd key": 1}"#
        ),
        ("tags", #"{"___operation": "JSON_SET", "args": {"$[1]": "two"}}"#, #"[1, "two", 3, 2, "x"]"#),
        ("tags", #"{"___operation": "ARRAY_PUSH", "args": [4, [5]]}"#, #"[1, 2, 3, 2, "x", 4, [5]]"#),
        ("tags", #"{"___operation": "ARRAY_PULL", "args": 2}"#, #"[1, 3, "x"]"#),
        ("tags", #"{"___operation": "ARRAY_PULL", "operator": "gt", "args": 1}"#, #"[1, "x"]"#),
        ("tags", #"{"___operation": "ARRAY_PULL", "operator": "in", "args": [1, "x"]}"#, #"[2, 3, 2]"#),
        ("tags", #"{"___operation": "ARRAY_PULL", "operator": "nin", "args": [2]}"#, #"[2, 2]"#),
        ("tags", #"{"___operation": "ARRAY_PULL_ALL", "args": [2, 3]}"#, #"[1, "x"]"#),
        ("tags", #"{"___operation": "ARRAY_POP", "args": 1}"#, #"[1, 2, 3, 2]"#),
        ("tags", #"{"___operation": "ARRAY_POP", "args": -1}"#, #"[2, 3, 2, "x"]"#),
        ("tags", #"{"___operation": "ARRAY_ADD_TO_SET", "args": [3, 4, 4, 5]}"#, #"[1, 2, 3, 2, "x", 4, 5]"#),
        ("n", #"{"___operation": "INCREMENT", "args": 5}"#, "15"),
        ("n", #"{"___operation": "INCREMENT", "args": -12}"#, "-2"),
        ("d", #"{"___operation": "INCREMENT", "args": -2.5}"#, "-1"),
    ]

    @Test func everyOperatorChangesTheColumnAsDocumented() async throws {
        try await EngineFixture.with { fixture in
            for (column, operation, expected) in Self.cases {
                let id = try #require(try await fixture.create("Ops", Self.start)["objectId"] as? String)
                let updated = try await fixture.engine.update(
                    "Ops", id: id, changes: try fixture.object(#"{"\#(column)": \#(operation)}"#),
                    identity: fixture.rest,
                    logger: fixture.logger)
                let value = try fixture.decode(updated)[column]
                let wanted = try JSONSerialization.jsonObject(with: Data(expected.utf8), options: .fragmentsAllowed)
                #expect((value as? NSObject) == (wanted as? NSObject), "\(column) \(operation) → \(value ?? "nil")")
            }
        }
    }

    @Test func operationsStartFromEmptyColumnsAndAddNewOnes() async throws {
        try await EngineFixture.with { fixture in
            let id = try #require(try await fixture.create("Ops", Self.start)["objectId"] as? String)
            let blank = try #require(try await fixture.create("Ops", #"{"s": "blank"}"#)["objectId"] as? String)
            let changes = #"""
                {"doc": {"___operation": "JSON_SET", "args": {"$.k": 1}}, "tags": {"___operation": "ARRAY_PUSH", "args": ["a"]},
                 "n": {"___operation": "INCREMENT", "args": 3}, "fresh": {"___operation": "ARRAY_ADD_TO_SET", "args": ["q"]}}
                """#
            let updated = try fixture.decode(
                try await fixture.engine.update(
                    "Ops", id: blank, changes: try fixture.object(changes), identity: fixture.rest,
                    logger: fixture.logger))
            #expect((updated["doc"] as? [String: Int]) == ["k": 1])
            #expect((updated["tags"] as? [String]) == ["a"])
            #expect(updated["n"] as? Int == 3)
            #expect((updated["fresh"] as? [String]) == ["q"])
            let untouched = try await fixture.engine.object(
                "Ops", id: id, query: FindQuery(), identity: fixture.rest, logger: fixture.logger)
            #expect(try fixture.decode(untouched)["fresh"] is NSNull)
        }
    }

    @Test func misusedOperationsAreClientErrorsAndChangeNothing() async throws {
        try await EngineFixture.with { fixture in
            let id = try #require(try await fixture.create("Ops", Self.start)["objectId"] as? String)
            let cases: [(String, Int)] = [
                (#"{"doc": {"___operation": "ARRAY_PUSH", "args": [1]}}"#, 1017),
                (#"{"s": {"___operation": "INCREMENT", "args": 1}}"#, 1012),
                (#"{"n": {"___operation": "INCREMENT", "args": 1.5}}"#, 1012),
                (#"{"s": {"___operation": "JSON_SET", "args": {"$.a": 1}}}"#, 1012),
                (#"{"doc": {"___operation": "JSON_MERGE", "args": {}}}"#, 1022),
                (#"{"doc": {"___operation": "JSON_SET", "args": {"$..a": 1}}}"#, 1022),
                (#"{"doc": {"___operation": "JSON_SET", "args": {"$.a[*]": 1}}}"#, 1022),
                (#"{"doc": {"___operation": "JSON_SET", "args": {}}}"#, 1022),
                (#"{"doc": {"___operation": "JSON_ARRAY_INSERT", "args": {"$.list": 1}}}"#, 1022),
                (#"{"doc": {"___operation": "JSON_REMOVE", "args": [1]}}"#, 1022),
                (#"{"tags": {"___operation": "ARRAY_POP", "args": 2}}"#, 1022),
                (#"{"tags": {"___operation": "ARRAY_PULL", "operator": "like", "args": 1}}"#, 1022),
                (#"{"tags": {"___operation": "ARRAY_PUSH", "args": 1}}"#, 1022),
            ]
            for (changes, code) in cases {
                do {
                    _ = try await fixture.engine.update(
                        "Ops", id: id, changes: try fixture.object(changes), identity: fixture.rest,
                        logger: fixture.logger)
                    Issue.record("accepted \(changes)")
                } catch let error as ErrorEnvelope {
                    #expect(error.code == code && error.status == 400, "\(changes) → \(error)")
                }
            }
            await #expect(throws: ErrorEnvelope.self) {
                _ = try await fixture.create("Ops", #"{"tags": {"___operation": "ARRAY_PUSH", "args": [1]}}"#)
            }
            let stored = try fixture.decode(
                try await fixture.engine.object(
                    "Ops", id: id, query: FindQuery(), identity: fixture.rest, logger: fixture.logger))
            let original = try fixture.decode(Self.start)
            for key in ["doc", "tags", "n", "d", "s"] {
                #expect((stored[key] as? NSObject) == (original[key] as? NSObject), "\(key) changed")
            }
            #expect(try await fixture.rowCount("Ops") == 1)
        }
    }

    @Test func concurrentOperationsLoseNothing() async throws {
        try await EngineFixture.with { fixture in
            let id = try #require(try await fixture.create("Ops", Self.start)["objectId"] as? String)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        let changes =
                            #"{"tags": {"___operation": "ARRAY_PUSH", "args": [\#(100 + index)]}, "n": {"___operation": "INCREMENT", "args": 1}}"#
                        _ = try await fixture.engine.update(
                            "Ops", id: id, changes: try fixture.object(changes), identity: fixture.rest,
                            logger: fixture.logger)
                    }
                }
                try await group.waitForAll()
            }
            let stored = try fixture.decode(
                try await fixture.engine.object(
                    "Ops", id: id, query: FindQuery(), identity: fixture.rest, logger: fixture.logger))
            #expect(stored["n"] as? Int == 30)
            let tags = try #require(stored["tags"] as? [Any])
            #expect(Set(tags.compactMap { $0 as? Int }.filter { $0 >= 100 }) == Set(100..<120))
        }
    }
}
