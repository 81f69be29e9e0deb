import DataEngine
import InternalProtocol
import QueryLanguage
import TestSupport
import Testing

/// Inputs `Fuzz/run.sh` found crashing the data engine, kept as tests.
@Suite struct FuzzRegressionTests {
    static let table = TableSchema(
        name: "T", columns: ColumnSchema.system + [ColumnSchema(name: "born", type: .datetime)])

    /// From 294,247 AD a date holds more microseconds since 1970 than 64 bits do: a real-time
    /// where clause naming one is refused (1017), where adding the epoch's offset trapped and
    /// took messaging-service down.
    @Test func realTimeClausesRefuseDatesBeyondSixtyFourBitMicroseconds() throws {
        let late = try QueryParser.condition("born = 9223775803775807")
        #expect(throws: ErrorEnvelope.self) { try ObjectPredicate(late, table: Self.table) }
        let stillCounted = try QueryParser.condition("born = 9223000000000000")
        #expect(throws: Never.self) { try ObjectPredicate(stillCounted, table: Self.table) }
    }
}

/// Columns named as the engine's SQL names its rows (`r`, `e`, `t`, `w`, `p`…): schemathesis
/// saved `{"r": {}}` and the update's `row_to_json(r)` became ambiguous, a 500; a table with a
/// column `r` could not even be created. Whole rows are now always `alias.*`.
@Suite(.timeLimit(.minutes(10))) struct AliasNamedColumnTests {
    @Test func columnsNamedLikeTheStatementsAliasesWork() async throws {
        try await EngineFixture.with { fixture in
            let names = ["r", "e", "t", "w", "p", "g", "l", "c", "s", "x"]
            let values = names.enumerated().map { "\"\($1)\": \($0)" }.joined(separator: ", ")
            let created = try await fixture.create("Letters", "{\(values)}")
            let id = try #require(created["objectId"] as? String)
            #expect(names.allSatisfy { created[$0] != nil })
            _ = try await fixture.engine.update(
                "Letters", id: id, changes: try fixture.object(#"{"r": 10, "e": 11}"#), identity: fixture.rest,
                logger: fixture.logger)
            let found = try await fixture.find("Letters", [("props", "r,e,t"), ("where", "r = 10")])
            #expect(found.count == 1 && found.first?["r"] as? Int == 10 && found.first?["e"] as? Int == 11)
            let grouped = try await fixture.find("Letters", [("props", "Count(r) as w"), ("groupBy", "t")])
            #expect(grouped.first?["w"] as? Int == 1)
            let removed = try await fixture.engine.delete(
                "Letters", id: id, identity: fixture.rest, logger: fixture.logger)
            #expect(removed > 0)
        }
    }
}
