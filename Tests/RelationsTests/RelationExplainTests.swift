import Foundation
import InternalProtocol
import PostgresNIO
import QueryLanguage
import TestSupport
import Testing

@testable import DataEngine

/// Relations stay on indexes at scale: with 100,000 orders of 10 items each (a million links) and
/// a maker per item, loading a page's items and their makers (depth 2) and a where clause through
/// the 1:N `items` are planned with index scans only — no sequential scan of orders, items, makers
/// or links. (Their speed is measured in `Benchmarks/`, not here.)
@Suite(.timeLimit(.minutes(20))) struct RelationExplainTests {
    static let orders = 100_000

    @Test func loadingTwoLevelsAndAWhereThroughOneToManyUseIndexes() async throws {
        try await EngineFixture.with { fixture in
            let schema = AppCatalog.schemaName(for: fixture.appID)
            for (table, columns) in [
                ("Orders", [ColumnSchema(name: "n", type: .int)]), ("Maker", [ColumnSchema(name: "n", type: .int)]),
                ("Item", [ColumnSchema(name: "price", type: .int, indexed: true)]),
            ] {
                _ = try await fixture.engine.addColumns(
                    table, columns: columns, identity: fixture.serverCode, logger: fixture.logger)
            }
            for (table, relation, target, many) in [
                ("Orders", "items", "Item", true), ("Item", "maker", "Maker", false),
            ] {
                _ = try await fixture.engine.addColumns(
                    table, columns: [],
                    relations: [RelationDefinition(name: relation, relatedTable: target, isMany: many)],
                    identity: fixture.serverCode, logger: fixture.logger)
            }
            let catalog = try await fixture.engine.cache.catalog(for: fixture.appID)
            let orders = try #require(catalog.table(named: "Orders"))
            let item = try #require(catalog.table(named: "Item"))
            let items = try #require(orders.relation(named: "items"))
            let maker = try #require(item.relation(named: "maker"))
            let setUp = [
                """
                INSERT INTO \(schema)."Orders" ("objectId", n, created)
                SELECT 'O' || g, g, now() + g * interval '1 millisecond' FROM generate_series(1, \(Self.orders)) g
                """,
                "INSERT INTO \(schema).\"Item\" (\"objectId\", price) SELECT 'I' || g, g FROM generate_series(1, \(Self.orders)) g",
                "INSERT INTO \(schema).\"Maker\" (\"objectId\", n) SELECT 'M' || g, g FROM generate_series(1, 1000) g",
                """
                INSERT INTO \(schema)."\(items.linkTable)" (parent, child)
                SELECT 'O' || g, 'I' || ((g * 10 + k) % \(Self.orders) + 1) FROM generate_series(1, \(Self.orders)) g, generate_series(0, 9) k
                """,
                """
                INSERT INTO \(schema)."\(maker.linkTable)" (parent, child)
                SELECT 'I' || g, 'M' || (g % 1000 + 1) FROM generate_series(1, \(Self.orders)) g
                """,
                "ANALYZE \(schema).\"Orders\"", "ANALYZE \(schema).\"Item\"", "ANALYZE \(schema).\"Maker\"",
                "ANALYZE \(schema).\"\(items.linkTable)\"", "ANALYZE \(schema).\"\(maker.linkTable)\"",
            ]
            for statement in setUp {
                _ = try await fixture.database.query(PostgresQuery(unsafeSQL: statement), logger: fixture.logger)
                    .collect()
            }
            let big: Set<String> = ["Orders", "Item", "Maker", items.linkTable, maker.linkTable]
            let loader = RelationLoader(
                catalog: catalog, identity: fixture.rest, access: fixture.engine.access,
                session: DatabaseSession(pool: fixture.database, logger: fixture.logger), pageSize: 10)
            let grants = (parent: AccessGrant.allRows, child: AccessGrant.allRows)

            let page = (1...10).map { "O\($0)" }
            let level1 = try loader.statement(
                items, parents: page, parentTable: orders, childTable: item, grants: grants, condition: nil,
                budget: 10_000)
            try await expectIndexesOnly(level1, big, uses: items.linkTable, fixture)
            let children = (1...100).map { "I\($0 * 7)" }
            let level2 = try loader.statement(
                maker, parents: children, parentTable: item, childTable: try #require(catalog.table(named: "Maker")),
                grants: grants, condition: nil, budget: 10_000)
            try await expectIndexesOnly(level2, big, uses: maker.linkTable, fixture)

            var query = FindQuery()
            query.condition = try QueryParser.condition("items.price > \(Self.orders - 5)")
            query.pageSize = 20
            var find = FindStatement(query: query, table: orders, schema: schema, grant: .allRows)
            find.relations = RelationPaths(catalog: catalog, access: fixture.engine.access, identity: fixture.rest)
            try await expectIndexesOnly(try find.page(), big, uses: items.linkTable, fixture)
            let found = try await fixture.engine.count(
                "Orders", query: query, identity: fixture.rest, logger: fixture.logger)
            #expect(found == 10, "five items, each in the same ten orders")
        }
    }

    /// Expects `sql`'s plan to scan none of `tables` sequentially and to use an index of `link`.
    private func expectIndexesOnly(_ sql: SQL, _ tables: Set<String>, uses link: String, _ fixture: EngineFixture)
        async throws
    {
        let nodes = try await fixture.plan(sql)
        let scans = nodes.filter { ($0["Node Type"] as? String)?.contains("Scan") == true }
        let sequential = scans.filter {
            $0["Node Type"] as? String == "Seq Scan" && tables.contains($0["Relation Name"] as? String ?? "")
        }
        #expect(sequential.isEmpty, "\(sequential)")
        #expect(
            scans.contains { ($0["Index Name"] as? String)?.hasPrefix(link) == true },
            "an index of the link table: \(scans)")
    }
}
