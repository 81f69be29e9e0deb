import Permissions

/// A ``PermissionPlan`` compiled into one SQL expression per row: each row layer contributes a
/// decision (`'GRANT'`, `'DENY'` or NULL) — object ACL look-ups (primary-key probes) and the
/// owner check — and `COALESCE` takes the first, falling back to the plan's constant decision.
struct PermissionFilter: Sendable {
    let plan: PermissionPlan<DataOperation>
    let operation: DataOperation
    let appID: String
    let table: String

    /// Writes `COALESCE(…) = 'GRANT'` over the row `rowAlias`.
    func write(into sql: inout SQL, rowAlias: String) {
        sql.append("COALESCE(")
        for layer in plan.rowLayers {
            switch layer {
            case .userACL(let user): userACL(&sql, rowAlias, user)
            case .roleACL(let roles): roleACL(&sql, rowAlias, roles)
            case .owner(let user, let decision): owner(&sql, rowAlias, user, decision)
            }
            sql.append(", ")
        }
        sql.bind(.text(plan.fallback.rawValue))
        sql.append(") = 'GRANT'")
    }

    /// Layer 1: the row's ACL cell for the user, else for every user.
    private func userACL(_ sql: inout SQL, _ rowAlias: String, _ user: String?) {
        sql.append("(SELECT a.decision FROM data.object_acl a")
        objectMatch(&sql, rowAlias)
        sql.append(" AND a.principal_kind = 'user' AND a.principal IN (")
        sql.bind(all: ([user].compactMap { $0 } + [Principal.everyone]).map(SQLValue.text))
        sql.append(") ORDER BY a.principal = '*' LIMIT 1)")
    }

    /// Layers 2 and 6: DENY if any of `roles` is denied on the row, else GRANT if any is granted.
    private func roleACL(_ sql: inout SQL, _ rowAlias: String, _ roles: [String]) {
        sql.append("(SELECT min(a.decision) FROM data.object_acl a")
        objectMatch(&sql, rowAlias)
        sql.append(" AND a.principal_kind = 'role' AND a.principal IN (")
        sql.bind(all: roles.map(SQLValue.text))
        sql.append("))")
    }

    /// Layer 5: the owner policy's decision for the caller's own rows.
    private func owner(_ sql: inout SQL, _ rowAlias: String, _ user: String, _ decision: PermissionDecision) {
        sql.append("CASE WHEN \(rowAlias).\"ownerId\" = ")
        sql.bind(.text(user))
        sql.append(" THEN ")
        sql.bind(.text(decision.rawValue))
        sql.append(" END")
    }

    private func objectMatch(_ sql: inout SQL, _ rowAlias: String) {
        sql.append(" WHERE a.app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND a.table_name = ")
        sql.bind(.text(table))
        sql.append(" AND a.object_id = \(rowAlias).\"objectId\" AND a.operation = ")
        sql.bind(.text(operation.rawValue))
    }
}
