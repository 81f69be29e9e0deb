import Foundation
import InternalProtocol
import Permissions
import PostgresNIO
import QueryLanguage

/// What real-time subscriptions to data changes need from the engine: the table and where
/// clause checked, read access per subscriber and objects' ACL cells (tables are watched
/// through ``ChangeSlot``).
extension DataEngine {
    /// The table `name` as the catalog spells it (1009 when there is none) and the clause
    /// compiled for objects (1017 / 1018 / 1019 when it cannot be).
    package func changeFilter(app: String, table name: String, whereClause: String?) async throws
        -> (table: String, predicate: ObjectPredicate?)
    {
        let (_, table) = try await table(name, app: app)
        guard let text = whereClause, !text.allSatisfy(\.isWhitespace) else { return (table.name, nil) }
        let condition = try DataError.parsing { () throws(QueryLanguageError) in try QueryParser.condition(text) }
        return (table.name, try ObjectPredicate(condition, table: table))
    }

    /// The read access of `identity` to `table` under the app's current permissions.
    package func readAccess(_ identity: Identity, table: String) async throws -> ObjectReadAccess {
        ObjectReadAccess(identity, table: table, catalog: try await cache.catalog(for: identity.appId))
    }

    /// The Find ACL cells of `ids` in `table`.
    package func findACLs(app: String, table: String, ids: [String]) async throws -> ObjectACLs {
        guard !ids.isEmpty else { return .none }
        let rows = try await database.query(
            """
            SELECT object_id, principal_kind, principal, decision FROM data.object_acl
            WHERE app_id = \(app) AND table_name = \(table.lowercased()) AND operation = \(DataOperation.find.rawValue) AND object_id = ANY(\(ids))
            """, logger: logger)
        var acls = ObjectACLs()
        for try await (id, kind, principal, decision) in rows.decode((String, String, String, String).self) {
            guard let decision = PermissionDecision(rawValue: decision) else { continue }
            acls.cells[id, default: []].append(.init(kind: kind, principal: principal, decision: decision))
        }
        return acls
    }
}
