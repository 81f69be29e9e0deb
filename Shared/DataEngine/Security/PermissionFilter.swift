/// The nine layers compiled into one SQL expression per row, in the oracle's order: each layer
/// contributes a decision (`'GRANT'`, `'DENY'` or NULL) and `COALESCE` takes the first — object
/// ACL lookups for the row-dependent layers (1, 2, 6; primary-key probes), the owner check
/// (5), and the caller's row-independent layers (3, 4, 7, 8, 9) as constants. The list ends at
/// the first constant that decides, and with the permissive default.
struct PermissionFilter: Sendable {
    let caller: PermissionCaller
    let operation: DataOperation
    let appID: String
    let table: String
    let rules: PermissionRules

    /// Writes `COALESCE(…) = 'GRANT'` over the row `rowAlias`.
    func write(into sql: inout SQL, rowAlias: String) {
        let (terms, decided) = layers(rowAlias)
        sql.append("COALESCE(")
        for term in terms {
            term(&sql)
            sql.append(", ")
        }
        sql.bind(.text((decided ?? .grant).rawValue))
        sql.append(") = 'GRANT'")
    }

    /// The row-dependent terms in layer order up to the first constant decision, and that
    /// decision (nil: no constant layer decides, the default grants).
    private func layers(_ rowAlias: String) -> (terms: [(inout SQL) -> Void], decided: PermissionDecision?) {
        let cells = rules.tables[table] ?? PermissionCells()
        var terms: [(inout SQL) -> Void] = [{ self.userACL(&$0, rowAlias) }]
        if !caller.customRoles.isEmpty { terms.append { self.roleACL(&$0, rowAlias, self.caller.customRoles) } }
        if let decided = cells.decision(forUser: caller.userID, operation) ?? cells.decision(forRoles: caller.customRoles, operation) {
            return (terms, decided)
        }
        if let user = caller.userID, let owner = rules.owner[table]?[operation] {
            terms.append { sql in
                sql.append("CASE WHEN \(rowAlias).\"ownerId\" = ")
                sql.bind(.text(user))
                sql.append(" THEN ")
                sql.bind(.text(owner.rawValue))
                sql.append(" END")
            }
        }
        terms.append { self.roleACL(&$0, rowAlias, self.caller.systemRoles) }
        let decided =
            cells.decision(forRoles: caller.systemRoles, operation)
            ?? rules.global.decision(forRoles: caller.customRoles, operation)
            ?? rules.global.decision(forRoles: caller.systemRoles, operation)
        return (terms, decided)
    }

    /// Layer 1: the row's ACL cell for the user, else for every user.
    private func userACL(_ sql: inout SQL, _ rowAlias: String) {
        sql.append("(SELECT a.decision FROM data.object_acl a")
        objectMatch(&sql, rowAlias)
        sql.append(" AND a.principal_kind = 'user' AND a.principal IN (")
        sql.bind(all: ([caller.userID].compactMap { $0 } + [Principal.everyone]).map(SQLValue.text))
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

    private func objectMatch(_ sql: inout SQL, _ rowAlias: String) {
        sql.append(" WHERE a.app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND a.table_name = ")
        sql.bind(.text(table))
        sql.append(" AND a.object_id = \(rowAlias).\"objectId\" AND a.operation = ")
        sql.bind(.text(operation.rawValue))
    }
}
