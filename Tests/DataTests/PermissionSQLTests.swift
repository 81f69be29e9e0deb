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
    func sql(_ fixture: EngineFixture, _ text: String, _ binds: [String] = []) async throws {
        var bindings = PostgresBindings()
        for value in binds { bindings.append(value) }
        do {
            _ = try await fixture.database.query(PostgresQuery(unsafeSQL: text, binds: bindings), logger: fixture.logger).collect()
        } catch {
            Issue.record("\(String(reflecting: error))")
            throw error
        }
    }

    /// Empties the permission store (ACL usage too, so plans with and without ACL probes both run).
    func clearPermissions(_ fixture: EngineFixture) async throws {
        for table in ["permissions", "owner_policies", "object_acl", "acl_usage"] {
            try await sql(fixture, "DELETE FROM data.\(table)")
        }
        await fixture.engine.cache.invalidateAll()
    }

    /// Writes `facts` into the store, in order, for objects `ids`; returns the oracle's view.
    func store(_ facts: [PermissionFact], ids: [String], fixture: EngineFixture) async throws -> PermissionScenario {
        try await clearPermissions(fixture)
        for fact in facts {
            let (kind, name) = fact.principal.parts
            switch fact.kind {
            case .table, .global:
                try await sql(
                    fixture,
                    """
                    INSERT INTO data.permissions (app_id, table_name, principal_kind, principal, operation, decision)
                    VALUES ($1, $2, $3, $4, $5, $6)
                    ON CONFLICT (app_id, table_name, principal_kind, principal, operation) DO UPDATE SET decision = excluded.decision
                    """,
                    [fixture.appID, fact.kind == .table ? "doc" : "", kind, name, fact.operation.rawValue, fact.decision.rawValue])
            case .owner:
                try await sql(
                    fixture,
                    """
                    INSERT INTO data.owner_policies (app_id, table_name, operation, decision) VALUES ($1, 'doc', $2, $3)
                    ON CONFLICT (app_id, table_name, operation) DO UPDATE SET decision = excluded.decision
                    """, [fixture.appID, fact.operation.rawValue, fact.decision.rawValue])
            case .acl:
                try await sql(
                    fixture,
                    """
                    INSERT INTO data.object_acl (app_id, table_name, object_id, operation, principal_kind, principal, decision)
                    VALUES ($1, 'doc', $2, $3, $4, $5, $6)
                    ON CONFLICT (app_id, table_name, object_id, operation, principal_kind, principal)
                    DO UPDATE SET decision = excluded.decision
                    """, [fixture.appID, ids[fact.object], fact.operation.rawValue, kind, name, fact.decision.rawValue])
            }
        }
        await fixture.engine.cache.invalidateAll()
        return PermissionScenario(facts)
    }

    /// Creates one object per ACL slot, owned as ``PermissionCallers/owner(of:)`` says; their ids.
    func seedObjects(_ fixture: EngineFixture) async throws -> [String] {
        var ids: [String] = []
        for index in 0..<PermissionFact.objectCount {
            let owner = PermissionCallers.owner(of: index)
            let identity = Identity(appId: fixture.appID, keyKind: .rest, userId: owner, roles: ["RestUser"])
            let created = try await fixture.create("Doc", #"{"n": \#(index)}"#, as: identity)
            ids.append(created["objectId"] as! String)
        }
        return ids
    }

    /// The ids the oracle lets `caller` perform `operation` on, in creation order.
    func allowed(_ scenario: PermissionScenario, _ caller: Identity, _ operation: DataOperation, _ ids: [String]) -> [String] {
        ids.indices.filter { scenario.allows(caller, operation, object: $0, owner: PermissionCallers.owner(of: $0)) }
            .map { ids[$0] }
    }

    /// `body`'s answer, or nil when it was refused with 1023 / 403.
    func unlessDenied<T>(_ body: () async throws -> T) async throws -> T? {
        do {
            return try await body()
        } catch let error as ErrorEnvelope where error.code == 1023 && error.status == 403 {
            return nil
        }
    }

    @Test func findsCountsAndPagesMatchTheOracle() async throws {
        try await EngineFixture.with { fixture in
            let ids = try await seedObjects(fixture)
            await propertyCheck(count: 60, input: PermissionFact.app(upTo: 14), PermissionCallers.generator(appID: fixture.appID)) {
                facts, caller in
                let scenario = try await store(facts, ids: ids, fixture: fixture)
                let expected = allowed(scenario, caller, .find, ids)
                var query = FindQuery()
                query.pageSize = 100
                query.sort = [SortItem(expression: .property(PropertyPath(["n"])), descending: false)]
                let found = try await unlessDenied {
                    try await fixture.engine.find("Doc", query: query, identity: caller, logger: fixture.logger)
                        .map { try fixture.decode($0)["objectId"] as! String }
                }
                #expect((found ?? []) == expected, "find")
                let count = try await unlessDenied {
                    try await fixture.engine.count("Doc", query: FindQuery(), identity: caller, logger: fixture.logger)
                }
                #expect((count ?? 0) == expected.count, "count")
                #expect((count == nil) == (found == nil), "count and find refuse alike")
                query.pageSize = 3
                query.offset = 2
                let page = try await unlessDenied {
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
            await propertyCheck(count: 20, input: PermissionFact.app(upTo: 14), PermissionCallers.generator(appID: fixture.appID)) {
                facts, caller in
                round += 1
                try await clearPermissions(fixture)
                _ = try await fixture.engine.deleteBulk("Doc", condition: nil, identity: fixture.serverCode, logger: fixture.logger)
                let ids = try await seedObjects(fixture)
                let scenario = try await store(facts, ids: ids, fixture: fixture)
                let updatable = allowed(scenario, caller, .update, ids)
                let updated = try await unlessDenied {
                    try await fixture.engine.updateBulk(
                        "Doc", condition: nil, changes: JSONObject([("mark", .integer(Int64(round)))]), identity: caller,
                        logger: fixture.logger)
                }
                #expect((updated ?? 0) == updatable.count, "update")
                let removable = allowed(scenario, caller, .remove, ids)
                let deleted = try await unlessDenied {
                    try await fixture.engine.deleteBulk("Doc", condition: nil, identity: caller, logger: fixture.logger)
                }
                #expect((deleted ?? 0) == removable.count, "delete")
                // With every permission lifted: marks and survivors are exactly the oracle's.
                try await clearPermissions(fixture)
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
            let ids = try await seedObjects(fixture)
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
            let ids = try await seedObjects(fixture)
            let bob = Identity(appId: fixture.appID, keyKind: .rest, userId: "bob", roles: ["AuthenticatedUser", "RestUser", "MyRole"])
            let facts =
                [DataOperation.find, .update, .remove].map {
                    PermissionFact(kind: .acl, principal: .role("MyRole"), operation: $0, decision: .deny, object: 0)
                } + [PermissionFact(kind: .table, principal: .user("bob"), operation: .create, decision: .deny, object: 0)]
            _ = try await store(facts, ids: ids, fixture: fixture)
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
            await expect(1023, 403) { _ = try await engine.object("Doc", id: ids[0], query: FindQuery(), identity: bob, logger: fixture.logger) }
            await expect(1023, 403) {
                _ = try await engine.update("Doc", id: ids[0], changes: JSONObject([("n", .integer(9))]), identity: bob, logger: fixture.logger)
            }
            await expect(1023, 403) { _ = try await engine.delete("Doc", id: ids[0], identity: bob, logger: fixture.logger) }
            await expect(1000, 404) { _ = try await engine.delete("Doc", id: "no-such-object", identity: bob, logger: fixture.logger) }
            await expect(1023, 403) { _ = try await fixture.create("Doc", #"{"n": 5}"#, as: bob) }
            _ = try await engine.object("Doc", id: ids[1], query: FindQuery(), identity: bob, logger: fixture.logger)
            _ = try await engine.object("Doc", id: ids[0], query: FindQuery(), identity: fixture.rest, logger: fixture.logger)
        }
    }
}
