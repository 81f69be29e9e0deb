import Logging
import PostgresNIO

/// Applies a service's migrations: each version once, in order, all in one transaction that
/// holds a cluster-wide advisory lock, so concurrent starts of any services serialise and a
/// failure leaves nothing half-applied.
package struct MigrationRunner: Sendable {
    /// Advisory lock key shared by every migration run (arbitrary, fixed).
    static let lockKey: Int64 = 0x6261_6173_6d69_67

    /// Owner recorded with each applied version, usually the service's short name.
    package let owner: String
    /// The owner's migrations.
    package let migrations: [any DatabaseMigration]

    /// Creates a runner; versions must be unique.
    package init(owner: String, migrations: [any DatabaseMigration]) {
        precondition(Set(migrations.map(\.version)).count == migrations.count, "duplicate migration version")
        self.owner = owner
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Applies what is missing and returns the versions applied by this call.
    @discardableResult
    package func apply(on client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.withTransaction(logger: logger) { connection in
            // Migrations may rebuild large tables: the pool's statement limit is for requests.
            try await connection.run("SET LOCAL statement_timeout = 0", logger: logger)
            try await connection.run("SELECT pg_advisory_xact_lock(\(Self.lockKey))", logger: logger)
            try await Self.createBookkeeping(on: connection, logger: logger)
            let applied = try await appliedVersions(on: connection, logger: logger)
            var newlyApplied: [Int] = []
            for migration in migrations where !applied.contains(migration.version) {
                logger.info("applying migration", metadata: ["owner": "\(owner)", "version": "\(migration.version)"])
                try await migration.apply(on: connection, logger: logger)
                try await record(migration, on: connection, logger: logger)
                newlyApplied.append(migration.version)
            }
            return newlyApplied
        }
    }

    // The runner's own table is the one thing created on demand: it must exist before any
    // numbered migration can be recorded. The advisory lock makes the IF NOT EXISTS race-free.
    private static func createBookkeeping(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.run("CREATE SCHEMA IF NOT EXISTS platform", logger: logger)
        try await connection.run(
            """
            CREATE TABLE IF NOT EXISTS platform.schema_migrations (
                owner text NOT NULL, version integer NOT NULL, name text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (owner, version))
            """, logger: logger)
    }

    private func appliedVersions(on connection: PostgresConnection, logger: Logger) async throws -> Set<Int> {
        let rows = try await connection.query(
            "SELECT version FROM platform.schema_migrations WHERE owner = \(owner)", logger: logger)
        var versions = Set<Int>()
        for try await version in rows.decode(Int.self) { versions.insert(version) }
        return versions
    }

    private func record(_ migration: any DatabaseMigration, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await connection.run(
            "INSERT INTO platform.schema_migrations (owner, version, name) VALUES (\(owner), \(migration.version), \(migration.name))",
            logger: logger)
    }
}
