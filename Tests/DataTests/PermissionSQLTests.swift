import DataEngine
import Foundation
import InternalProtocol
import PostgresNIO
import QueryLanguage
import Testing
import TestSupport

/// The SQL path against the oracle: random permissions, owner policies and ACLs, random
/// callers; finds, counts, pages, bulk updates and bulk deletes must touch exactly the objects
/// ``PermissionOracle`` allows. Seeds are fixed, so a failure names a reproducible case.
@Suite(.timeLimit(.minutes(2))) struct PermissionSQLTests {
    /// SplitMix64: small, seedable, good enough to spread cases.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
        mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
        mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
        mutating func decision() -> PermissionDecision { chance(50) ? .grant : .deny }
    }

    static let users = ["u1", "u2", "u3"]
    static let customRoles = ["Editors", "Viewers"]
    static let systemRoles = ["AuthenticatedUser", "NotAuthenticatedUser", "RestUser", "JSUser", "*"]
    static let operations: [DataOperation] = [.find, .update, .remove]

    /// One random app: what the store holds, mirrored as the oracle's inputs.
    struct Scenario {
        var rules = PermissionRules()
        var acls: [String: PermissionCells] = [:]
    }

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

    /// Writes a random scenario for `objects` into the store and returns it.
    func randomScenario(_ random: inout Random, objects: [String], fixture: EngineFixture) async throws -> Scenario {
        var scenario = Scenario()
        for table in ["DELETE FROM data.permissions", "DELETE FROM data.owner_policies", "DELETE FROM data.object_acl"] {
            try await sql(fixture, table)
        }
        func principal(_ random: inout Random, roles: [String]) -> Principal {
            random.chance(40) ? .user(random.pick(Self.users + ["*"])) : .role(random.pick(roles))
        }
        for operation in Self.operations {
            for _ in 0..<random.below(4) {
                let cell = principal(&random, roles: Self.customRoles + Self.systemRoles)
                let decision = random.decision()
                scenario.rules.tables["doc", default: PermissionCells()].set(cell, operation, decision)
                try await store(fixture, table: "doc", cell, operation, decision)
            }
            for _ in 0..<random.below(3) {
                let role = random.pick(Self.customRoles + Self.systemRoles)
                let decision = random.decision()
                scenario.rules.global.set(.role(role), operation, decision)
                try await store(fixture, table: "", .role(role), operation, decision)
            }
            if random.chance(50) {
                let decision = random.decision()
                scenario.rules.owner["doc", default: [:]][operation] = decision
                try await sql(
                    fixture, "INSERT INTO data.owner_policies (app_id, table_name, operation, decision) VALUES ($1, 'doc', $2, $3)",
                    [fixture.appID, operation.rawValue, decision.rawValue])
            }
            for object in objects where random.chance(40) {
                for _ in 0..<(1 + random.below(2)) {
                    let cell = principal(&random, roles: Self.customRoles + Self.systemRoles)
                    let decision = random.decision()
                    scenario.acls[object, default: PermissionCells()].set(cell, operation, decision)
                    let (kind, name) = Self.parts(cell)
                    try await sql(
                        fixture,
                        """
                        INSERT INTO data.object_acl (app_id, table_name, object_id, operation, principal_kind, principal, decision)
                        VALUES ($1, 'doc', $2, $3, $4, $5, $6)
                        ON CONFLICT (app_id, table_name, object_id, operation, principal_kind, principal)
                        DO UPDATE SET decision = excluded.decision
                        """, [fixture.appID, object, operation.rawValue, kind, name, decision.rawValue])
                }
            }
        }
        await fixture.engine.cache.invalidateAll()
        return scenario
    }

    static func parts(_ principal: Principal) -> (String, String) {
        switch principal {
        case .user(let name): ("user", name)
        case .role(let name): ("role", name)
        }
    }

    func store(_ fixture: EngineFixture, table: String, _ principal: Principal, _ operation: DataOperation, _ decision: PermissionDecision)
        async throws
    {
        let (kind, name) = Self.parts(principal)
        try await sql(
            fixture,
            """
            INSERT INTO data.permissions (app_id, table_name, principal_kind, principal, operation, decision)
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (app_id, table_name, principal_kind, principal, operation) DO UPDATE SET decision = excluded.decision
            """, [fixture.appID, table, kind, name, operation.rawValue, decision.rawValue])
    }

    func randomCaller(_ random: inout Random, appID: String) -> Identity {
        let user = random.chance(75) ? random.pick(Self.users) : nil
        let key: APIKeyKind = random.chance(50) ? .rest : .js
        let custom = user == nil ? [] : Self.customRoles.filter { _ in random.chance(50) }
        var identity = Identity(
            appId: appID, keyKind: key, userId: user,
            roles: [user == nil ? SystemRoles.notAuthenticated : SystemRoles.authenticated, key.role] + custom)
        identity.sessionId = user
        return identity
    }

    /// Creates the objects, owned round-robin by the users and nobody; their ids and owners.
    func seedObjects(_ fixture: EngineFixture, count: Int) async throws -> [(id: String, owner: String?)] {
        var objects: [(String, String?)] = []
        for index in 0..<count {
            let owner = index % 4 == 3 ? nil : Self.users[index % 3]
            let identity = Identity(appId: fixture.appID, keyKind: .rest, userId: owner, roles: ["RestUser"])
            let created = try await fixture.create("Doc", #"{"n": \#(index)}"#, as: identity)
            objects.append((created["objectId"] as! String, owner))
        }
        return objects
    }

    func allowed(_ scenario: Scenario, _ caller: Identity, _ operation: DataOperation, _ objects: [(id: String, owner: String?)])
        -> [String]
    {
        objects.filter { object in
            PermissionOracle.allows(
                PermissionCaller(caller), operation, table: "Doc", ownerID: object.owner,
                acl: scenario.acls[object.id] ?? PermissionCells(), rules: scenario.rules)
        }.map(\.id)
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64]) func findsCountsAndPagesMatchTheOracle(seed: UInt64) async throws {
        try await EngineFixture.with { fixture in
            let objects = try await seedObjects(fixture, count: 12)
            var random = Random(state: seed)
            for round in 0..<8 {
                let scenario = try await randomScenario(&random, objects: objects.map(\.id), fixture: fixture)
                for _ in 0..<4 {
                    let caller = randomCaller(&random, appID: fixture.appID)
                    let expected = allowed(scenario, caller, .find, objects)
                    var query = FindQuery()
                    query.pageSize = 100
                    query.sort = [SortItem(expression: .property(PropertyPath(["n"])), descending: false)]
                    let found = try await fixture.engine.find("Doc", query: query, identity: caller, logger: fixture.logger)
                        .map { try fixture.decode($0)["objectId"] as! String }
                    #expect(found == expected, "seed \(seed) round \(round) caller \(caller.userId ?? "-") \(caller.roles)")
                    let count = try await fixture.engine.count("Doc", query: FindQuery(), identity: caller, logger: fixture.logger)
                    #expect(count == expected.count, "seed \(seed) round \(round)")
                    query.pageSize = 3
                    query.offset = 2
                    let page = try await fixture.engine.find("Doc", query: query, identity: caller, logger: fixture.logger)
                        .map { try fixture.decode($0)["objectId"] as! String }
                    #expect(page == Array(expected.dropFirst(2).prefix(3)), "seed \(seed) round \(round) page")
                }
            }
        }
    }

    @Test(arguments: [11, 12, 13] as [UInt64]) func bulkUpdatesAndDeletesTouchOnlyPermittedObjects(seed: UInt64) async throws {
        try await EngineFixture.with { fixture in
            var random = Random(state: seed)
            for round in 0..<4 {
                if round > 0 { _ = try await fixture.engine.deleteBulk("Doc", condition: nil, identity: fixture.serverCode, logger: fixture.logger) }
                let objects = try await seedObjects(fixture, count: 10)
                let scenario = try await randomScenario(&random, objects: objects.map(\.id), fixture: fixture)
                let caller = randomCaller(&random, appID: fixture.appID)
                let updatable = allowed(scenario, caller, .update, objects)
                let updated = try await fixture.engine.updateBulk(
                    "Doc", condition: nil, changes: JSONObject([("mark", .integer(Int64(round + 1)))]), identity: caller,
                    logger: fixture.logger)
                #expect(updated == updatable.count, "seed \(seed) round \(round) update")
                let removable = allowed(scenario, caller, .remove, objects)
                let deleted = try await fixture.engine.deleteBulk("Doc", condition: nil, identity: caller, logger: fixture.logger)
                #expect(deleted == removable.count, "seed \(seed) round \(round) delete")
                // Check with every permission lifted: marks and survivors are exactly the oracle's.
                for table in ["DELETE FROM data.permissions", "DELETE FROM data.owner_policies", "DELETE FROM data.object_acl"] {
                    try await sql(fixture, table)
                }
                await fixture.engine.cache.invalidateAll()
                let rest = try await fixture.find("Doc", [("pageSize", "100")])
                let survivors = Set(rest.map { $0["objectId"] as! String })
                #expect(survivors == Set(objects.map(\.id)).subtracting(removable), "seed \(seed) round \(round)")
                let marked = Set(rest.filter { $0["mark"] as? Int == round + 1 }.map { $0["objectId"] as! String })
                #expect(marked == Set(updatable).subtracting(removable), "seed \(seed) round \(round)")
            }
        }
    }

    @Test func deniedSingleObjectOperationsAre403AndUnknownOnes404() async throws {
        try await EngineFixture.with { fixture in
            let objects = try await seedObjects(fixture, count: 2)
            let bob = Identity(appId: fixture.appID, keyKind: .rest, userId: "bob", roles: ["AuthenticatedUser", "RestUser", "MyRole"])
            for operation in [DataOperation.find, .update, .remove] {
                try await sql(
                    fixture,
                    """
                    INSERT INTO data.object_acl (app_id, table_name, object_id, operation, principal_kind, principal, decision)
                    VALUES ($1, 'doc', $2, $3, 'role', 'MyRole', 'DENY')
                    """, [fixture.appID, objects[0].id, operation.rawValue])
            }
            try await store(fixture, table: "doc", .user("bob"), .create, .deny)
            await fixture.engine.cache.invalidateAll()
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
            await expect(1023, 403) { _ = try await engine.object("Doc", id: objects[0].id, query: FindQuery(), identity: bob, logger: fixture.logger) }
            await expect(1023, 403) {
                _ = try await engine.update("Doc", id: objects[0].id, changes: JSONObject([("n", .integer(9))]), identity: bob, logger: fixture.logger)
            }
            await expect(1023, 403) { _ = try await engine.delete("Doc", id: objects[0].id, identity: bob, logger: fixture.logger) }
            await expect(1000, 404) { _ = try await engine.delete("Doc", id: "no-such-object", identity: bob, logger: fixture.logger) }
            await expect(1023, 403) { _ = try await fixture.create("Doc", #"{"n": 5}"#, as: bob) }
            _ = try await engine.object("Doc", id: objects[1].id, query: FindQuery(), identity: bob, logger: fixture.logger)
            _ = try await engine.object("Doc", id: objects[0].id, query: FindQuery(), identity: fixture.rest, logger: fixture.logger)
        }
    }
}
