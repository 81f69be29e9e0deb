import DataEngine
import Foundation
import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport
import ServiceLifecycle
import Testing

/// A data engine on a fresh migrated database, with its catalog listener running.
package struct EngineFixture: Sendable {
    package let engine: DataEngine
    package let database: PostgresClient
    package let appID = UUID().uuidString
    package let logger = TestDatabase.logger

    package var rest: Identity { .anonymous(appId: appID, keyKind: .rest) }
    package var serverCode: Identity { .anonymous(appId: appID, keyKind: .serverCode) }

    package static func with(_ body: @Sendable (EngineFixture) async throws -> Void) async throws {
        try await TestDatabase.with(migrated: true) { configuration in
            try await PostgresClient.with(configuration, logger: TestDatabase.logger) { client in
                try await MigrationRunner(owner: "data", migrations: CatalogMigrations.all)
                    .apply(on: client, logger: TestDatabase.logger)
                let engine = DataEngine(database: client, logger: TestDatabase.logger)
                let fixture = EngineFixture(engine: engine, database: client)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await engine.listener.run() }
                    defer { group.cancelAll() }
                    try await fixture.waitUntilListening(engine)
                    try await body(fixture)
                }
            }
        }
    }

    /// Waits until `engine`'s catalog listener is subscribed; it drops the cache when it
    /// subscribes, which would otherwise race a test's warm-up reads.
    package func waitUntilListening(_ engine: DataEngine) async throws {
        for _ in 0..<3_000 where await !engine.cache.isListening {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(await engine.cache.isListening)
    }

    /// Parses a JSON object literal.
    package func object(_ text: String) throws -> JSONObject {
        try #require(try JSONParser.parse(text).object)
    }

    /// Decodes a row or response text.
    package func decode(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    package func create(_ table: String, _ json: String, as identity: Identity? = nil) async throws -> [String: Any] {
        try decode(try await engine.create(table, object: try object(json), identity: identity ?? rest, logger: logger))
    }

    package func find(_ table: String, _ parameters: [(String, String)]) async throws -> [[String: Any]] {
        let query = try FindQuery(QueryParameters(queryItems: parameters.map { (name: $0.0, value: $0.1) }))
        return try await engine.find(table, query: query, identity: rest, logger: logger).map(decode)
    }

    /// The number of rows in the app's table, read directly with SQL.
    package func rowCount(_ table: String) async throws -> Int {
        let schema = AppCatalog.schemaName(for: appID)
        let rows = try await database.query(
            PostgresQuery(unsafeSQL: "SELECT count(*) FROM \"\(schema)\".\"\(table)\""), logger: logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// Every node of PostgreSQL's plan for `sql` (`EXPLAIN (FORMAT JSON)`), subplans included.
    package func plan(_ sql: SQL) async throws -> [[String: Any]] {
        let explain = PostgresQuery(unsafeSQL: "EXPLAIN (FORMAT JSON) " + sql.text, binds: sql.bindings)
        let text = try #require(try await database.query(explain, logger: logger).collect().first?.decode(String.self))
        let document = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]
        let root = try #require(document?.first?["Plan"] as? [String: Any])
        var nodes: [[String: Any]] = []
        var pending = [root]
        while let node = pending.popLast() {
            nodes.append(node)
            pending += node["Plans"] as? [[String: Any]] ?? []
        }
        return nodes
    }

    /// Expects `body` to fail with `code`.
    package func expectCode(_ code: Int, _ label: String = "", _ body: () async throws -> Int) async throws {
        do {
            let value = try await body()
            Issue.record("\(label): expected \(code), got \(value)")
        } catch let error as ErrorEnvelope {
            #expect(error.code == code, "\(label): \(error.message)")
        }
    }
}
