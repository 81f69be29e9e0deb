/// The security model as a plain function: whether `caller` may perform `operation` on one
/// object, walking the seed's nine layers (S0:7288-7296) in order; the first layer with a
/// decision ends the walk, within a layer any DENY beats a GRANT, and when no layer decides
/// the permissive default grants. The SQL row filters must agree with it on every input.
public enum PermissionOracle {
    /// The decision for one object, given its owner and its ACL.
    public static func allows(
        _ caller: PermissionCaller, _ operation: DataOperation, table: String, ownerID: String?, acl: PermissionCells,
        rules: PermissionRules
    ) -> Bool {
        let tableCells = rules.tables[table.lowercased()] ?? PermissionCells()
        let isOwner = caller.userID != nil && ownerID == caller.userID
        let layers: [() -> PermissionDecision?] = [
            { acl.decision(forUser: caller.userID, operation) },
            { acl.decision(forRoles: caller.customRoles, operation) },
            { tableCells.decision(forUser: caller.userID, operation) },
            { tableCells.decision(forRoles: caller.customRoles, operation) },
            { isOwner ? rules.owner[table.lowercased()]?[operation] : nil },
            { acl.decision(forRoles: caller.systemRoles, operation) },
            { tableCells.decision(forRoles: caller.systemRoles, operation) },
            { rules.global.decision(forRoles: caller.customRoles, operation) },
            { rules.global.decision(forRoles: caller.systemRoles, operation) },
        ]
        for layer in layers {
            if let decision = layer() { return decision == .grant }
        }
        return true
    }
}
