import DataEngine
import Foundation
import InternalProtocol
import Permissions
import PostgresNIO
import PostgresSupport
import Testing

/// The permission store driven directly for property tests: random facts (``PermissionFact``)
/// written to SQL on table `Doc`, and the objects they name.
extension EngineFixture {
    /// Runs trusted SQL with text binds, recording any failure.
    package func sql(_ text: String, _ binds: [String] = []) async throws {
        var bindings = PostgresBindings()
        for value in binds { bindings.append(value) }
        do {
            try await database.run(PostgresQuery(unsafeSQL: text, binds: bindings), logger: logger)
        } catch {
            Issue.record("\(String(reflecting: error))")
            throw error
        }
    }

    /// Empties the permission store (ACL usage too, so plans with and without ACL probes both run).
    package func clearPermissions() async throws {
        for table in ["permissions", "owner_policies", "object_acl", "acl_usage"] {
            try await sql("DELETE FROM data.\(table)")
        }
        await engine.cache.invalidateAll()
    }

    /// Writes `facts` into the store, in order, for objects `ids`; returns the oracle's view.
    package func storePermissions(_ facts: [PermissionFact], ids: [String]) async throws -> PermissionScenario {
        try await clearPermissions()
        for fact in facts {
            let (kind, name) = fact.principal.parts
            switch fact.kind {
            case .table, .global:
                try await sql(
                    """
                    INSERT INTO data.permissions (app_id, table_name, principal_kind, principal, operation, decision)
                    VALUES ($1, $2, $3, $4, $5, $6)
                    ON CONFLICT (app_id, table_name, principal_kind, principal, operation) DO UPDATE SET decision = excluded.decision
                    """,
                    [
                        appID, fact.kind == .table ? "doc" : "", kind, name, fact.operation.rawValue,
                        fact.decision.rawValue,
                    ])
            case .owner:
                try await sql(
                    """
                    INSERT INTO data.owner_policies (app_id, table_name, operation, decision) VALUES ($1, 'doc', $2, $3)
                    ON CONFLICT (app_id, table_name, operation) DO UPDATE SET decision = excluded.decision
                    """, [appID, fact.operation.rawValue, fact.decision.rawValue])
            case .acl:
                try await sql(
                    """
                    INSERT INTO data.object_acl (app_id, table_name, object_id, operation, principal_kind, principal, decision)
                    VALUES ($1, 'doc', $2, $3, $4, $5, $6)
                    ON CONFLICT (app_id, table_name, object_id, operation, principal_kind, principal)
                    DO UPDATE SET decision = excluded.decision
                    """, [appID, ids[fact.object], fact.operation.rawValue, kind, name, fact.decision.rawValue])
            }
        }
        await engine.cache.invalidateAll()
        return PermissionScenario(facts)
    }

    /// Creates one `Doc` per ACL slot, owned as ``PermissionCallers/owner(of:)`` says; their ids.
    package func seedDocs() async throws -> [String] {
        var ids: [String] = []
        for index in 0..<PermissionFact.objectCount {
            let owner = PermissionCallers.owner(of: index)
            let identity = Identity(appId: appID, keyKind: .rest, userId: owner, roles: ["RestUser"])
            ids.append(try #require(try await create("Doc", #"{"n": \#(index)}"#, as: identity)["objectId"] as? String))
        }
        return ids
    }

    /// The ids the oracle lets `caller` perform `operation` on, in `ids`' order.
    package func allowed(
        _ scenario: PermissionScenario, _ caller: Identity, _ operation: DataOperation, _ ids: [String]
    )
        -> [String]
    {
        ids.indices.filter { scenario.allows(caller, operation, object: $0, owner: PermissionCallers.owner(of: $0)) }
            .map { ids[$0] }
    }

    /// `body`'s answer, or nil when it was refused with 1023 / 403.
    package static func unlessDenied<T>(_ body: () async throws -> T) async throws -> T? {
        do {
            return try await body()
        } catch let error as ErrorEnvelope where error.code == 1023 && error.status == 403 {
            return nil
        }
    }
}
