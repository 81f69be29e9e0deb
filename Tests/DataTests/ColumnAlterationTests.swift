import DataEngine
import Foundation
import InternalProtocol
import TestSupport
import Testing

/// Altering a column keeps its indexes findable: a rename combined with an index change, and a
/// rename that changes only the case of the name.
@Suite(.timeLimit(.minutes(20))) struct ColumnAlterationTests {
    @Test func renamingWithAnIndexChangeKeepsTheIndexManageable() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Tag", #"{"a": "x"}"#)
            _ = try await fixture.engine.alterColumn(
                "Tag", column: "a", changes: try fixture.object(#"{"unique": true, "name": "b"}"#),
                identity: fixture.serverCode, logger: fixture.logger)
            await #expect(throws: ErrorEnvelope.self) { _ = try await fixture.create("Tag", #"{"b": "x"}"#) }
            _ = try await fixture.engine.alterColumn(
                "Tag", column: "b", changes: try fixture.object(#"{"unique": false}"#),
                identity: fixture.serverCode, logger: fixture.logger)
            _ = try await fixture.create("Tag", #"{"b": "x"}"#)  // the constraint is really gone
            #expect(try await fixture.rowCount("Tag") == 2)
        }
    }

    @Test func aCaseOnlyRenameOfAnIndexedColumnWorks() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Tag", #"{"label": "x"}"#)
            for changes in [
                #"{"indexed": true, "unique": true}"#, #"{"name": "Label"}"#, #"{"unique": false, "name": "LABEL"}"#,
            ] {
                let column = try #require(
                    try await fixture.engine.properties("Tag", identity: fixture.rest).array?
                        .compactMap { $0.object?["name"]?.string }.first { $0.lowercased() == "label" })
                _ = try await fixture.engine.alterColumn(
                    "Tag", column: column, changes: try fixture.object(changes), identity: fixture.serverCode,
                    logger: fixture.logger)
            }
            _ = try await fixture.create("Tag", #"{"LABEL": "x"}"#)
            let found = try await fixture.find("Tag", [("where", "LABEL = 'x'")])
            #expect(found.count == 2)
        }
    }
}
