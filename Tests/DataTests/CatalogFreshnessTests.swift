import DataEngine
import Foundation
import InternalProtocol
import Permissions
import TestSupport
import Testing

/// A permission granted through one service is honoured at once by another whose cache has not
/// heard of it yet (the announcement travels on its own time): a refusal is checked against the
/// committed catalog version before it stands.
@Suite(.timeLimit(.minutes(20))) struct CatalogFreshnessTests {
    @Test func aRefusalIsCheckedAgainstTheCommittedRules() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Doc", #"{"n": 1}"#)
            let deny = PermissionChange(decision: .deny, operation: .create, principal: .role("*"))
            try await fixture.engine.setRulePermission(
                deny, table: "Doc", identity: fixture.serverCode, logger: fixture.logger)
            // Another service's engine, whose cache hears of no change (it runs no listener).
            let other = DataEngine(database: fixture.database, logger: fixture.logger)
            func create() async throws -> String {
                try await other.create(
                    "Doc", object: try fixture.object(#"{"n": 2}"#), identity: fixture.rest, logger: fixture.logger)
            }
            do {
                _ = try await create()
                Issue.record("created despite the DENY")
            } catch let error as ErrorEnvelope {
                #expect(error.code == 1023, "the rule is read: \(error.message)")
            }
            // The grant comes through the first engine; the other still caches the DENY.
            let grant = PermissionChange(decision: .grant, operation: .create, principal: .role("*"))
            try await fixture.engine.setRulePermission(
                grant, table: "Doc", identity: fixture.serverCode, logger: fixture.logger)
            let created = try fixture.decode(try await create())
            #expect(created["n"] as? Int == 2, "the committed GRANT decides")
            // A refusal that the committed rules uphold still stands.
            try await fixture.engine.setRulePermission(
                deny, table: "Doc", identity: fixture.serverCode, logger: fixture.logger)
            await other.cache.invalidateAll()
            await #expect(throws: ErrorEnvelope.self) { _ = try await create() }
        }
    }

    /// A table or column made through one engine a moment ago is found by another whose cache
    /// has not heard of it: the miss is checked against the committed schema and the request
    /// runs once more; a name the committed schema lacks too is still refused.
    @Test func aSchemaMissIsCheckedAgainstTheCommittedSchema() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Doc", #"{"n": 1}"#)
            let other = DataEngine(database: fixture.database, logger: fixture.logger)
            func count(_ table: String, _ clause: String) async throws -> Int {
                let query = try FindQuery(QueryParameters(queryItems: [(name: "where", value: clause)]))
                return try await other.count(table, query: query, identity: fixture.rest, logger: fixture.logger)
            }
            func retried(_ table: String, _ clause: String) async throws -> Int {
                try await other.retryingOnStaleSchema(app: fixture.appID, logger: fixture.logger) {
                    try await count(table, clause)
                }
            }
            #expect(try await count("Doc", "n = 1") == 1, "the other engine caches the schema")
            _ = try await fixture.create("Doc", #"{"n": 2, "late": "x"}"#)
            _ = try await fixture.create("Fresh", #"{"n": 3}"#)
            await #expect(throws: DataError.columnNotFound("late", table: "Doc")) {
                _ = try await count("Doc", "late = 'x'")
            }
            #expect(try await retried("Doc", "late = 'x'") == 1)
            #expect(try await retried("Fresh", "n = 3") == 1)
            await #expect(throws: DataError.columnNotFound("never", table: "Doc")) {
                _ = try await retried("Doc", "never = 1")
            }
        }
    }
}
