import DataEngine
import Foundation
import InternalProtocol
import Permissions
import Testing
import TestSupport

/// A permission granted through one service is honoured at once by another whose cache has not
/// heard of it yet (the announcement travels on its own time): a refusal is checked against the
/// committed catalog version before it stands.
@Suite(.timeLimit(.minutes(5))) struct CatalogFreshnessTests {
    @Test func aRefusalIsCheckedAgainstTheCommittedRules() async throws {
        try await EngineFixture.with { fixture in
            _ = try await fixture.create("Doc", #"{"n": 1}"#)
            let deny = PermissionChange(decision: .deny, operation: .create, principal: .role("*"))
            try await fixture.engine.setRulePermission(deny, table: "Doc", identity: fixture.serverCode, logger: fixture.logger)
            // Another service's engine, whose cache hears of no change (it runs no listener).
            let other = DataEngine(database: fixture.database, logger: fixture.logger)
            func create() async throws -> String {
                try await other.create("Doc", object: try fixture.object(#"{"n": 2}"#), identity: fixture.rest, logger: fixture.logger)
            }
            do {
                _ = try await create()
                Issue.record("created despite the DENY")
            } catch let error as ErrorEnvelope {
                #expect(error.code == 1023, "the rule is read: \(error.message)")
            }
            // The grant comes through the first engine; the other still caches the DENY.
            let grant = PermissionChange(decision: .grant, operation: .create, principal: .role("*"))
            try await fixture.engine.setRulePermission(grant, table: "Doc", identity: fixture.serverCode, logger: fixture.logger)
            let created = try fixture.decode(try await create())
            #expect(created["n"] as? Int == 2, "the committed GRANT decides")
            // A refusal that the committed rules uphold still stands.
            try await fixture.engine.setRulePermission(deny, table: "Doc", identity: fixture.serverCode, logger: fixture.logger)
            await other.cache.invalidateAll()
            await #expect(throws: ErrorEnvelope.self) { _ = try await create() }
        }
    }
}
