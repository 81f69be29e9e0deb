import DataEngine
import Foundation
import InternalProtocol
import PostgresNIO
import PostgresSupport
import Testing
import TestSupport

/// The catalog cache across instances: a schema change made by one engine reaches another
/// through `pg_notify`, without the other querying the catalog on every read.
@Suite(.timeLimit(.minutes(2))) struct CatalogTests {
    @Test func aSchemaChangeOnOneInstanceReachesAnother() async throws {
        try await EngineFixture.with { fixture in
            let second = DataEngine(database: fixture.database, logger: fixture.logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await second.listener.run() }
                defer { group.cancelAll() }
                try await fixture.waitUntilListening(second)
                _ = try await fixture.create("Shared", #"{"a": 1}"#)
                // Let the create's own notification reach the second instance before warming it.
                try await Task.sleep(for: .milliseconds(300))
                let query = FindQuery()
                _ = try await second.find("Shared", query: query, identity: fixture.rest, logger: fixture.logger)
                let warm = second.statements.value
                _ = try await second.find("Shared", query: query, identity: fixture.rest, logger: fixture.logger)
                #expect(second.statements.value - warm == 1, "a warm read queried the catalog")
                _ = try await fixture.create("Shared", #"{"a": 2, "b": "new"}"#)
                var seen = false
                for _ in 0..<50 where !seen {
                    let props = try await second.properties("Shared", identity: fixture.rest)
                    seen = (props.array ?? []).contains { $0.object?["name"]?.string == "b" }
                    if !seen { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(seen, "the second instance never saw the new column")
            }
        }
    }
}
