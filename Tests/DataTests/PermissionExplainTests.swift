import Foundation
import InternalProtocol
import Permissions
import PostgresNIO
import QueryLanguage
import TestSupport
import Testing

@testable import DataEngine

/// The permission filter keeps finds on indexes: on a 100,000-row table with object ACLs and
/// an owner policy in place, PostgreSQL's plan for a user's find and count reads the table
/// through the where clause's index and answers each ACL layer with a primary-key probe —
/// no sequential scan anywhere. (Its speed against the server-code key is measured in
/// `Benchmarks/`, not here.)
@Suite(.timeLimit(.minutes(3))) struct PermissionExplainTests {
    static let rows = 100_000

    @Test func aUsersFindAndCountOnAHundredThousandRowsUseIndexesOnly() async throws {
        try await EngineFixture.with { fixture in
            let schema = AppCatalog.schemaName(for: fixture.appID)
            _ = try await fixture.create("Big", #"{"k": 0}"#)
            let setUp = [
                """
                INSERT INTO \(schema)."Big" ("objectId", k, "ownerId")
                SELECT upper(gen_random_uuid()::text), g % 1000, 'u' || (g % 50) FROM generate_series(1, \(Self.rows)) g
                """,
                "CREATE INDEX big_k ON \(schema).\"Big\" (k)",
                // ACL cells on every tenth object for a role and for users: 30,000 cells.
                """
                INSERT INTO data.object_acl (app_id, table_name, object_id, operation, principal_kind, principal, decision)
                SELECT '\(fixture.appID)', 'big', "objectId", 'Find', p.kind, p.name, p.decision
                FROM \(schema)."Big" b,
                     (VALUES ('role', 'Editors', 'DENY'), ('user', 'u1', 'GRANT'), ('role', 'AuthenticatedUser', 'DENY')) p(kind, name, decision)
                WHERE b.k % 10 = 3
                """,
                "INSERT INTO data.owner_policies (app_id, table_name, operation, decision) VALUES ('\(fixture.appID)', 'big', 'Find', 'GRANT')",
                "ANALYZE \(schema).\"Big\"",
                "ANALYZE data.object_acl",
            ]
            for statement in setUp {
                _ = try await fixture.database.query(PostgresQuery(unsafeSQL: statement), logger: fixture.logger)
                    .collect()
            }
            await fixture.engine.cache.invalidateAll()
            let user = Identity(
                appId: fixture.appID, keyKind: .rest, userId: "u1", roles: ["AuthenticatedUser", "RestUser", "Editors"])
            let catalog = try await fixture.engine.cache.catalog(for: fixture.appID)
            let table = try #require(catalog.table(named: "Big"))
            let grant = try fixture.engine.access.authorize(user, .find, table: "Big", catalog: catalog)
            #expect(grant.rowFilter != nil, "ACLs and an owner policy leave the rows to decide")

            var query = FindQuery()
            query.condition = try QueryParser.condition("k = 13")
            query.pageSize = 20
            let statement = FindStatement(query: query, table: table, schema: schema, grant: grant)
            for sql in [try statement.page(), try statement.count()] {
                let nodes = try await fixture.plan(sql)
                let scans = nodes.filter { ($0["Node Type"] as? String)?.contains("Scan") == true }
                #expect(!scans.contains { $0["Node Type"] as? String == "Seq Scan" }, "\(scans)")
                #expect(scans.contains { $0["Index Name"] as? String == "big_k" }, "the where clause's index: \(scans)")
                let probes = scans.filter { $0["Relation Name"] as? String == "object_acl" }
                #expect(probes.count == 3, "layers 1, 2 and 6: \(probes)")
                #expect(probes.allSatisfy { ($0["Node Type"] as? String)?.hasPrefix("Index") == true }, "\(probes)")
            }
            // Every k = 13 row carries u1's own GRANT (layer 1), which beats the role denials.
            let found = try await fixture.engine.count("Big", query: query, identity: user, logger: fixture.logger)
            #expect(found == Self.rows / 1000)
        }
    }
}
