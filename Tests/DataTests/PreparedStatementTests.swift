import Foundation
import InternalProtocol
import PostgresNIO
import PostgresSupport
import QueryLanguage
import TestSupport
import Testing

@testable import DataEngine

/// Statements that repeat are prepared once per connection, within a bound, and a schema change
/// never answers with a stale plan: PostgreSQL's "cached plan must not change result type" is
/// retried under a new name, alone and inside a transaction.
@Suite(.timeLimit(.minutes(20))) struct PreparedStatementTests {
    /// A pool of one connection, so every statement meets the statements prepared before it.
    private func withOneConnection(_ body: @Sendable (DatabaseSession, PreparedStatements) async throws -> Void)
        async throws
    {
        try await TestDatabase.with { configuration in
            var single = configuration
            single.maximumConnections = 1
            try await PostgresClient.with(single, logger: TestDatabase.logger) { client in
                let prepared = PreparedStatements(perConnection: 4)
                try await body(DatabaseSession(pool: client, logger: TestDatabase.logger, prepared: prepared), prepared)
            }
        }
    }

    private func preparedNames(_ session: DatabaseSession) async throws -> [String] {
        try await session.column(
            SQL("SELECT name FROM pg_prepared_statements WHERE statement NOT LIKE '%pg_prepared%'"), as: String.self)
    }

    /// `before`, the value bound, `after`.
    private func bound(_ before: String, _ value: Int64, _ after: String = "") -> SQL {
        var sql = SQL(before)
        sql.bind(.integer(value))
        sql.append(after)
        return sql
    }

    @Test func aStatementIsPreparedWhenItComesBackAndKeepsAnswering() async throws {
        try await withOneConnection { session, _ in
            let doubled = "SELECT (2 * "
            let first = try await session.column(bound(doubled, 1, ")::text"), as: String.self)
            #expect(first == ["2"])
            let afterOne = try await preparedNames(session)
            #expect(afterOne.isEmpty)  // seen once: unnamed
            for value: Int64 in 2...5 {
                let answer = try await session.column(bound(doubled, value, ")::text"), as: String.self)
                #expect(answer == ["\(value * 2)"])
            }
            let afterFive = try await preparedNames(session)
            #expect(afterFive.count == 1)
        }
    }

    @Test func eachConnectionKeepsAtMostItsBoundLeastRecentlyUsedFirst() async throws {
        try await withOneConnection { session, _ in
            for round in 0..<3 {
                for threshold in 0..<10 {
                    let answer = try await session.column(
                        bound("SELECT (\(threshold) + ", Int64(round), ")::text"), as: String.self)
                    #expect(answer == ["\(round + threshold)"])
                }
            }
            let kept = try await preparedNames(session)
            #expect(kept.count == 4, "\(kept)")
        }
    }

    @Test func statementsWhosePlanDependsOnTheirValuesAreNeverPrepared() async throws {
        try await withOneConnection { session, _ in
            for value: Int64 in 1...4 {
                var sql = bound("SELECT (", value, " * 3)::text")
                sql.markPlanSensitive()
                let answer = try await session.column(sql, as: String.self)
                #expect(answer == ["\(value * 3)"])
            }
            let kept = try await preparedNames(session)
            #expect(kept.isEmpty)
        }
    }

    @Test func likeAndDistanceMakeAFindPlanSensitive() throws {
        let table = TableSchema(
            name: "Place",
            columns: [
                ColumnSchema(name: "name", type: .string), ColumnSchema(name: "lat", type: .double),
                ColumnSchema(name: "lon", type: .double),
            ])
        for (clause, sensitive) in [
            ("name = 'x'", false), ("name LIKE 'x%'", true), ("distance(lat, lon, 1, 2) < km(5)", true),
            ("lat > km(1)", false),
        ] {
            var query = FindQuery()
            query.condition = try QueryParser.condition(clause)
            let page = try FindStatement(query: query, table: table, schema: "app_x", grant: .allRows).page()
            #expect(page.isPlanSensitive == sensitive, "\(clause)")
        }
    }

    @Test func aColumnWhoseTypeChangesIsReadAgainWithoutAStalePlan() async throws {
        try await withOneConnection { session, _ in
            try await session.execute("CREATE TABLE t (id bigint PRIMARY KEY, v integer)")
            try await session.execute("INSERT INTO t VALUES (1, 7)")
            let read = "SELECT v FROM t WHERE id = "
            for _ in 0..<2 {
                let row = try #require(try await session.rows(bound(read, 1)).first)
                #expect(try row.decode(Int32.self) == 7)
            }
            #expect(try await preparedNames(session).count == 1)
            try await session.execute("ALTER TABLE t ALTER COLUMN v TYPE text USING v::text || '!'")
            let alone = try #require(try await session.rows(bound(read, 1)).first)
            #expect(try alone.decode(String.self) == "7!")

            try await session.execute("ALTER TABLE t ALTER COLUMN v TYPE bigint USING length(v)")
            let inTransaction = try await session.transaction { transaction in
                try await transaction.execute("UPDATE t SET v = v + 40")
                return try #require(try await transaction.rows(bound(read, 1)).first)
                    .decode(Int64.self)
            }
            #expect(inTransaction == 42)  // the transaction ran again whole: 2 + 40, not 2 + 80
        }
    }

    @Test func aSchemaChangeUnderLoadNeverAnswersWithAStalePlan() async throws {
        try await EngineFixture.with { fixture in
            var created: [String] = []
            for n in 0..<20 {
                created.append(
                    try #require(try await fixture.create("Gauge", #"{"n": \#(n), "k": 1}"#)["objectId"] as? String))
            }
            let ids = created
            let steps = [#"{"type": "STRING"}"#, #"{"type": "DOUBLE"}"#, #"{"type": "INT"}"#, #"{"type": "STRING"}"#]
            let stage = Stage()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for reader in 0..<6 {
                    group.addTask {
                        var turn = 0
                        while await !stage.finished {
                            let started = await stage.completed
                            let id = ids[(reader + turn) % ids.count]
                            turn += 1
                            let read =
                                reader.isMultiple(of: 2)
                                ? try fixture.decode(
                                    try await fixture.engine.object(
                                        "Gauge", id: id, query: FindQuery(), identity: fixture.rest,
                                        logger: fixture.logger))
                                : try #require(
                                    try await fixture.find("Gauge", [("where", "k = 1"), ("pageSize", "5")]).first)
                            let ended = await stage.begun
                            #expect(
                                (started...ended).contains { Stage.matches(read["n"], $0) },
                                "steps \(started)...\(ended): \(String(describing: read["n"]))")
                        }
                    }
                }
                group.addTask {
                    for (offset, step) in steps.enumerated() {
                        try await Task.sleep(for: .milliseconds(150))
                        await stage.begin(offset + 1)
                        _ = try await fixture.engine.alterColumn(
                            "Gauge", column: "n", changes: try fixture.object(step), identity: fixture.serverCode,
                            logger: fixture.logger)
                        await stage.complete(offset + 1)
                    }
                    try await Task.sleep(for: .milliseconds(150))
                    await stage.finish()
                }
                try await group.waitForAll()
            }
        }
    }
}

/// Which column changes have begun and completed: a read started after step k completed and
/// finished before step k + 2 began sees step k's type or k + 1's, never an earlier one.
private actor Stage {
    private(set) var completed = 0
    private(set) var begun = 0
    private(set) var finished = false

    func begin(_ step: Int) { begun = step }
    func complete(_ step: Int) { completed = step }
    func finish() { finished = true }

    /// Whether `value` has the wire type column `n` has after `step` (INT, STRING, DOUBLE, INT, STRING).
    nonisolated static func matches(_ value: Any?, _ step: Int) -> Bool {
        switch step {
        case 1, 4: value is String
        default: value is NSNumber
        }
    }
}
