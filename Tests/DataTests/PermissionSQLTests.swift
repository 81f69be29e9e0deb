import DataEngine
import Foundation
import InternalProtocol
import Permissions
import PostgresNIO
import PropertyBased
import QueryLanguage
import TestSupport
import Testing

/// The SQL path against the oracle, property-based: random apps (``PermissionFact``: table,
/// global, owner and object-ACL cells) and random callers; finds, counts, pages, bulk updates
/// and bulk deletes must touch exactly the objects ``PermissionOracle`` allows — or, when no
/// object could be allowed, refuse with 1023. A failure prints its facts, shrunk, and a seed.
@Suite(.timeLimit(.minutes(4))) struct PermissionSQLTests {
    @Test func findsCountsAndPagesMatchTheOracle() async throws {
        try await EngineFixture.with { fixture in
            let ids = try await fixture.seedDocs()
            await propertyCheck(
                count: 60, input: PermissionFact.app(upTo: 14), PermissionCallers.generator(appID: fixture.appID)
            ) {
                facts, caller in
                let scenario = try await fixture.storePermissions(facts, ids: ids)
                let expected = fixture.allowed(scenario, caller, .find, ids)
                var query = FindQuery()
                query.pageSize = 100
                query.sort = [SortItem(expression: .property(PropertyPath(["n"])), descending: false)]
                let found = try await EngineFixture.unlessDenied {
                    try await fixture.engine.find("Doc", query: query, identity: caller, logger: fixture.logger)
                        .map { try fixture.decode($0)["objectId"] as! String }
                }
                #expect((found ?? []) == expected, "find")
                let count = try await EngineFixture.unlessDenied {
                    try await fixture.engine.count("Doc", query: FindQuery(), identity: caller, logger: fixture.logger)
                }
                #expect((count ?? 0) == expected.count, "count")
                #expect((count == nil) == (found == nil), "count and find refuse alike")
                query.pageSize = 3
                query.offset = 2
                let page = try await EngineFixture.unlessDenied {
                    try await fixture.engine.find("Doc", query: query, identity: caller, logger: fixture.logger)
                        .map { try fixture.decode($0)["objectId"] as! String }
                }
                #expect((page ?? []) == Array(expected.dropFirst(2).prefix(3)), "page")
            }
        }
    }

    @Test func bulkUpdatesAndDeletesTouchOnlyPermittedObjects() async throws {
        try await EngineFixture.with { fixture in
            var round = 0
            await propertyCheck(
                count: 20, input: PermissionFact.app(upTo: 14), PermissionCallers.generator(appID: fixture.appID)
            ) {
                facts, caller in
                round += 1
                try await fixture.clearPermissions()
                _ = try await fixture.engine.deleteBulk(
                    "Doc", condition: nil, identity: fixture.serverCode, logger: fixture.logger)
                let ids = try await fixture.seedDocs()
                let scenario = try await fixture.storePermissions(facts, ids: ids)
                let updatable = fixture.allowed(scenario, caller, .update, ids)
                let updated = try await EngineFixture.unlessDenied {
                    try await fixture.engine.updateBulk(
                        "Doc", condition: nil, changes: JSONObject([("mark", .integer(Int64(round)))]),
                        identity: caller,
                        logger: fixture.logger)
                }
                #expect((updated ?? 0) == updatable.count, "update")
                let removable = fixture.allowed(scenario, caller, .remove, ids)
                let deleted = try await EngineFixture.unlessDenied {
                    try await fixture.engine.deleteBulk("Doc", condition: nil, identity: caller, logger: fixture.logger)
                }
                #expect((deleted ?? 0) == removable.count, "delete")
                // With every permission lifted: marks and survivors are exactly the oracle's.
                try await fixture.clearPermissions()
                let rest = try await fixture.find("Doc", [("pageSize", "100")])
                let survivors = Set(rest.map { $0["objectId"] as! String })
                #expect(survivors == Set(ids).subtracting(removable), "survivors")
                let marked = Set(rest.filter { $0["mark"] as? Int == round }.map { $0["objectId"] as! String })
                #expect(marked == Set(updatable).subtracting(removable), "marks")
            }
        }
    }

    /// Another instance learns of a table's first object ACL only through the trigger's
    /// announcement: until then its plan for the table has no ACL probes at all.
    @Test func aFirstACLReachesAnotherInstanceThroughTheAnnouncement() async throws {
        try await EngineFixture.with { fixture in
            let ids = try await fixture.seedDocs()
            let other = DataEngine(database: fixture.database, logger: fixture.logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await other.listener.run() }
                defer { group.cancelAll() }
                try await fixture.waitUntilListening(other)
                let rest = fixture.rest
                func visible() async throws -> Int {
                    try await other.count("Doc", query: FindQuery(), identity: rest, logger: fixture.logger)
                }
                #expect(try await visible() == ids.count)
                try await fixture.engine.setObjectPermission(
                    PermissionChange(decision: .deny, operation: .find, principal: .role("RestUser")), table: "Doc",
                    objectID: ids[0], identity: fixture.serverCode, logger: fixture.logger)
                var seen = ids.count
                for _ in 0..<1_500 where seen == ids.count {
                    try await Task.sleep(for: .milliseconds(20))
                    seen = try await visible()
                }
                #expect(seen == ids.count - 1)
            }
        }
    }

    @Test func deniedSingleObjectOperationsAre403AndUnknownOnes404() async throws {
        try await EngineFixture.with { fixture in
            let ids = try await fixture.seedDocs()
            let bob = Identity(
                appId: fixture.appID, keyKind: .rest, userId: "bob", roles: ["AuthenticatedUser", "RestUser", "MyRole"])
            let facts =
                [DataOperation.find, .update, .remove].map {
                    PermissionFact(kind: .acl, principal: .role("MyRole"), operation: $0, decision: .deny, object: 0)
                } + [
                    PermissionFact(
                        kind: .table, principal: .user("bob"), operation: .create, decision: .deny, object: 0)
                ]
            _ = try await fixture.storePermissions(facts, ids: ids)
            func expect(_ code: Int, _ status: Int, _ body: () async throws -> Void) async {
                do {
                    try await body()
                    Issue.record("expected \(code)")
                } catch let error as ErrorEnvelope {
                    #expect(error.code == code && error.status == status, "\(error)")
                } catch {
                    Issue.record("unexpected \(error)")
                }
            }
            let engine = fixture.engine
            await expect(1023, 403) {
                _ = try await engine.object(
                    "Doc", id: ids[0], query: FindQuery(), identity: bob, logger: fixture.logger)
            }
            await expect(1023, 403) {
                _ = try await engine.update(
                    "Doc", id: ids[0], changes: JSONObject([("n", .integer(9))]), identity: bob, logger: fixture.logger)
            }
            await expect(1023, 403) {
                _ = try await engine.delete("Doc", id: ids[0], identity: bob, logger: fixture.logger)
            }
            await expect(1000, 404) {
                _ = try await engine.delete("Doc", id: "no-such-object", identity: bob, logger: fixture.logger)
            }
            await expect(1023, 403) { _ = try await fixture.create("Doc", #"{"n": 5}"#, as: bob) }
            _ = try await engine.object("Doc", id: ids[1], query: FindQuery(), identity: bob, logger: fixture.logger)
            _ = try await engine.object(
                "Doc", id: ids[0], query: FindQuery(), identity: fixture.rest, logger: fixture.logger)
        }
    }
}
