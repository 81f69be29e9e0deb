import InternalProtocol
import Logging
import Permissions
import PostgresNIO

/// Which of some ids name objects of one table, and on which of those a caller may perform one
/// operation.
package struct ObjectPermits: Sendable, Equatable {
    /// The ids that name objects of the table.
    package var existing: Set<String> = []
    /// The ids whose objects the caller may act on (a part of ``existing``).
    package var permitted: Set<String> = []

    /// No ids.
    package init() {}
}

extension DataEngine {
    /// Which of `ids` name objects of `tableName`, and on which of those `identity` may perform
    /// `operation` under the app's permissions: the decision a find or an update of each of them
    /// would take (table rules, owner policy, object ACLs, compiled into one statement). Lets
    /// another owner's assets follow an object's rights (files kept for a file field). 1009 for
    /// an unknown table.
    package func permits(
        _ operation: DataOperation, objectIDs ids: Set<String>, table tableName: String, identity: Identity,
        logger: Logger
    ) async throws -> ObjectPermits {
        guard !ids.isEmpty else { return ObjectPermits() }
        let grant: AccessGrant?
        do {
            grant = try await permit(identity, operation, table: tableName)
        } catch let refusal as ErrorEnvelope where refusal.code == 1023 {  // denied for every row
            grant = nil
        }
        let (catalog, table) = try await table(tableName, app: identity.appId)
        var sql = SQL("SELECT t.\"objectId\", ")
        if let filter = grant?.rowFilter {
            filter(&sql, "t")
        } else {
            sql.append(grant == nil ? "FALSE" : "TRUE")
        }
        sql.append(" FROM ")
        sql.table(catalog.schemaName, table.name)
        sql.append(" AS t WHERE t.\"objectId\" = ANY(")
        sql.bind(.textArray(ids.sorted()))
        sql.append(")")
        let rows = try await mappingErrors(table: table.name, logger: logger) { try await session(logger).rows(sql) }
        var permits = ObjectPermits()
        for row in rows {
            let (id, permitted) = try row.decode((String, Bool).self)
            permits.existing.insert(id)
            if permitted { permits.permitted.insert(id) }
        }
        return permits
    }
}
