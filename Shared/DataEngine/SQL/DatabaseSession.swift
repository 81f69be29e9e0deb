import InternalProtocol
import Logging
import Metrics
import PostgresNIO
import PostgresSupport
import Synchronization

/// Counts the statements an engine sends (tests assert round trips with it).
package final class StatementCounter: Sendable {
    private let count = Atomic<Int>(0)

    /// Creates a counter at zero.
    package init() {}

    /// Statements sent so far.
    package var value: Int { count.load(ordering: .relaxed) }

    func increment() {
        count.add(1, ordering: .relaxed)
    }
}

/// Where statements run: the pool (each statement on any connection) or one connection inside
/// a transaction. Every statement the data engine sends passes through here and is counted in
/// `baas_sql_statements_total`, which tests use to prove round-trip counts.
package struct DatabaseSession: Sendable {
    private enum Target: Sendable {
        case pool(PostgresClient)
        case connection(PostgresConnection)
    }

    private static let statements = Counter(label: "baas_sql_statements_total")

    private let target: Target
    private let counter: StatementCounter
    private let prepared: PreparedStatements
    /// The logger statements log to.
    package let logger: Logger

    /// Statements on the pool, counted by `counter`, those that repeat prepared by `prepared`
    /// (which must belong to `pool`).
    package init(
        pool: PostgresClient, logger: Logger, counter: StatementCounter = StatementCounter(),
        prepared: PreparedStatements = PreparedStatements(perConnection: 0)
    ) {
        target = .pool(pool)
        self.logger = logger
        self.counter = counter
        self.prepared = prepared
    }

    private init(
        connection: PostgresConnection, logger: Logger, counter: StatementCounter, prepared: PreparedStatements
    ) {
        target = .connection(connection)
        self.logger = logger
        self.counter = counter
        self.prepared = prepared
    }

    /// Runs `sql` and returns its rows.
    package func rows(_ sql: SQL) async throws -> [PostgresRow] {
        Self.statements.increment()
        counter.increment()
        switch target {
        case .pool(let client):
            return try await client.withConnection { connection in
                try await Self.onceMoreIfStalePlan { try await rows(sql, on: connection) }
            }
        case .connection(let connection):
            return try await rows(sql, on: connection)
        }
    }

    private func rows(_ sql: SQL, on connection: PostgresConnection) async throws -> [PostgresRow] {
        try await prepared.rows(
            sql.text, bindings: sql.bindings, types: sql.bindingTypes, on: connection, preparing: !sql.isPlanSensitive,
            logger: logger)
    }

    /// Runs `sql` and decodes the first column of every row.
    package func column<Value: PostgresDecodable>(_ sql: SQL, as type: Value.Type = Value.self) async throws
        -> [Value]
    {
        try await rows(sql).map { row in
            guard let cell = row.first else { throw ErrorEnvelope.internalError }
            return try cell.decode(Value.self, context: .default)
        }
    }

    /// Runs `body` in one transaction on one connection at `isolation`, committing when it
    /// returns and rolling back when it throws.
    package func transaction<Result: Sendable>(
        isolation: IsolationLevel = .readCommitted, _ body: (DatabaseSession) async throws -> Result
    ) async throws -> Result {
        switch target {
        case .connection:
            return try await body(self)
        case .pool(let client):
            // A transaction that met a stale plan was rolled back whole, so it may run again.
            return try await Self.onceMoreIfStalePlan { try await transaction(on: client, isolation: isolation, body) }
        }
    }

    /// Runs `work`, and once more when it met a stale plan: the failure retired the plan's
    /// name, so the second run prepares the statement afresh.
    private static func onceMoreIfStalePlan<Result>(_ work: () async throws -> Result) async throws -> Result {
        do {
            return try await work()
        } catch  where PreparedStatements.isStalePlan(error) {
            return try await work()
        }
    }

    private func transaction<Result: Sendable>(
        on client: PostgresClient, isolation: IsolationLevel, _ body: (DatabaseSession) async throws -> Result
    ) async throws -> Result {
        try await client.withConnection { connection in
            let session = DatabaseSession(connection: connection, logger: logger, counter: counter, prepared: prepared)
            try await session.execute("BEGIN ISOLATION LEVEL \(isolation.rawValue)")
            do {
                let result = try await body(session)
                try await session.execute("COMMIT")
                return result
            } catch {
                try? await session.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Runs trusted statement text without binds.
    package func execute(_ trusted: String) async throws {
        _ = try await rows(SQL(trusted))
    }

    /// Transaction isolation levels (the unit-of-work's `isolationLevelEnum`).
    package enum IsolationLevel: String, Sendable {
        case readUncommitted = "READ UNCOMMITTED"
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }
}
