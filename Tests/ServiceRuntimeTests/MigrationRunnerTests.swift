import Logging
import PostgresNIO
import PostgresSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(20))) struct MigrationRunnerTests {
    static let migrations: [any DatabaseMigration] = [
        SQLMigration(version: 1, name: "one", statements: ["CREATE TABLE platform.one (id int PRIMARY KEY)"]),
        SQLMigration(version: 2, name: "two", statements: ["ALTER TABLE platform.one ADD COLUMN name text"]),
    ]
    let logger = TestDatabase.logger

    private func columns(_ client: PostgresClient) async throws -> [String] {
        let rows = try await client.query(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'platform' AND table_name = 'one' ORDER BY ordinal_position",
            logger: logger)
        var names: [String] = []
        for try await name in rows.decode(String.self) { names.append(name) }
        return names
    }

    private func recorded(_ client: PostgresClient) async throws -> [Int] {
        let rows = try await client.query(
            "SELECT version FROM platform.schema_migrations WHERE owner = 'test' ORDER BY version", logger: logger)
        var versions: [Int] = []
        for try await version in rows.decode(Int.self) { versions.append(version) }
        return versions
    }

    @Test func applyingTwiceIsANoOp() async throws {
        try await TestDatabase.with { database async throws in
            try await PostgresClient.with(database, logger: logger) { client async throws in
                let runner = MigrationRunner(owner: "test", migrations: Self.migrations)
                #expect(try await runner.apply(on: client, logger: logger) == [1, 2])
                #expect(try await runner.apply(on: client, logger: logger) == [])
                #expect(try await columns(client) == ["id", "name"])
                #expect(try await recorded(client) == [1, 2])
            }
        }
    }

    @Test func concurrentStartsApplyEachVersionOnce() async throws {
        try await TestDatabase.with { database async throws in
            let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await PostgresClient.with(database, logger: logger) { client async throws in
                            try await MigrationRunner(owner: "test", migrations: Self.migrations)
                                .apply(on: client, logger: logger)
                        }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0 += $1 }
            }
            #expect(applied.sorted() == [1, 2])
            try await PostgresClient.with(database, logger: logger) { client async throws in
                #expect(try await columns(client) == ["id", "name"])
                #expect(try await recorded(client) == [1, 2])
            }
        }
    }

    @Test func aFailingMigrationLeavesNothingHalfApplied() async throws {
        try await TestDatabase.with { database async throws in
            try await PostgresClient.with(database, logger: logger) { client async throws in
                let broken = Self.migrations + [SQLMigration(version: 3, name: "bad", statements: ["SELECT nonsense("])]
                var failed = false
                do {
                    try await MigrationRunner(owner: "test", migrations: broken).apply(on: client, logger: logger)
                } catch {
                    failed = true
                }
                #expect(failed)
                #expect(try await columns(client) == [])
                let runner = MigrationRunner(owner: "test", migrations: Self.migrations)
                #expect(try await runner.apply(on: client, logger: logger) == [1, 2])
            }
        }
    }
}
