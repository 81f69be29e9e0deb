import Logging
import PostgresNIO
import PostgresSupport
import TestSupport
import Testing

/// ``PostgresConnection/run(_:logger:)``: a statement whose rows nobody reads still reports the
/// error it raises while running (PostgresNIO answers such a statement at its rows'
/// description, before it has run; a lost slot-creation timeout once marked a table watched
/// with no slot to read its events).
@Suite(.timeLimit(.minutes(2))) struct RunToEndTests {
    @Test func anErrorRaisedWhileAStatementRunsReachesItsCaller() async throws {
        try await TestDatabase.with { configuration in
            try await PostgresClient.with(configuration, logger: TestDatabase.logger) { client in
                // Evaluated row by row, so the error comes after the rows' description.
                let failing: PostgresQuery = "SELECT 1 / (x - 1) FROM generate_series(1, 1) AS x"
                try await client.withConnection { connection in
                    await #expect(throws: PSQLError.self) {
                        try await connection.run(failing, logger: TestDatabase.logger)
                    }
                    try await connection.run("SELECT 1", logger: TestDatabase.logger)
                }
                await #expect(throws: PSQLError.self) { try await client.run(failing, logger: TestDatabase.logger) }
                try await client.run("SELECT pg_sleep(0)", logger: TestDatabase.logger)
            }
        }
    }
}
