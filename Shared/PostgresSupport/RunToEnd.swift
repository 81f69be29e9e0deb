import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs a statement to its end, dropping any rows. PostgresNIO answers a statement that
    /// returns rows as soon as their description arrives, before the statement has run, and an
    /// error raised while it runs (a timeout, a lock not taken, a constraint) comes with the
    /// rows: a caller that does not read them never learns of it. Every statement whose rows
    /// are not wanted runs through here.
    package func run(_ query: PostgresQuery, logger: Logger) async throws {
        for try await _ in try await self.query(query, logger: logger) {}
    }
}

extension PostgresClient {
    /// Runs a statement to its end on a pooled connection, dropping any rows (see
    /// ``PostgresNIO/PostgresConnection/run(_:logger:)``).
    package func run(_ query: PostgresQuery, logger: Logger) async throws {
        for try await _ in try await self.query(query, logger: logger) {}
    }
}
