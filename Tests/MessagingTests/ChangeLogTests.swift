import Foundation
import Logging
import PostgresNIO
import PostgresSupport
import TestSupport
import Testing

@testable import MessagingService

/// The change log's slot and its watched tables: a table is marked watched only once the slot
/// that reads its events exists, however long making the slot waits.
@Suite(.timeLimit(.minutes(5))) struct ChangeLogTests {
    @Test func aWatchWaitingForItsSlotMarksNothingUntilTheSlotIsReady() async throws {
        try await TestDatabase.with(migrated: true) { configuration in
            try await PostgresClient.with(configuration, logger: TestDatabase.logger) { client in
                let logger = TestDatabase.logger
                let log = ChangeLog(database: client, logger: logger)
                let app = UUID().uuidString
                func watched() async throws -> Int {
                    let rows = try await client.query(
                        "SELECT count(*)::int FROM data.watched_tables WHERE app_id = \(app)", logger: logger)
                    var count = 0
                    for try await value in rows.decode(Int.self) { count = value }
                    return count
                }
                try await client.withConnection { side in
                    // A transaction with an id of its own: making a slot waits for it to end.
                    try await side.run("BEGIN", logger: logger)
                    try await side.run("SELECT txid_current()", logger: logger)
                    let watching = Task { try await log.watch([(app, "T")], for: .seconds(60)) }
                    for _ in 0..<10 {
                        try await Task.sleep(for: .milliseconds(100))
                        #expect(try await watched() == 0, "an event emitted now would have no slot to go to")
                    }
                    try await side.run("COMMIT", logger: logger)
                    try await watching.value
                }
                #expect(try await watched() == 1)
                let rows = try await client.query(
                    "SELECT confirmed_flush_lsn IS NOT NULL FROM pg_replication_slots WHERE database = current_database()",
                    logger: logger)
                var ready: [Bool] = []
                for try await value in rows.decode(Bool.self) { ready.append(value) }
                #expect(ready == [true])
                try await client.run(
                    "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = current_database()",
                    logger: logger)
            }
        }
    }
}
