/// The security model as a plain function: whether `caller` may perform `operation` on one
/// asset (a data object; a file) in a container (its table; its directory), walking the seed's
/// nine layers (S0:7288-7296) in order; the first layer with a decision ends the walk, within a
/// layer any DENY beats a GRANT, and when no layer decides the permissive default grants. The
/// SQL row filters and the gateway's check must agree with it on every input.
package enum PermissionOracle {
    /// The decision for one asset, given its owner and its ACL.
    package static func allows<Operation>(
        _ caller: PermissionCaller, _ operation: Operation, container: String, ownerID: String?,
        acl: PermissionMatrix<Operation>, rules: ContainerPermissions<Operation>
    ) -> Bool {
        let containerCells = rules.containers[container.lowercased()] ?? PermissionMatrix<Operation>()
        let isOwner = caller.userID != nil && ownerID == caller.userID
        let layers: [() -> PermissionDecision?] = [
            { acl.decision(forUser: caller.userID, operation) },
            { acl.decision(forRoles: caller.customRoles, operation) },
            { containerCells.decision(forUser: caller.userID, operation) },
            { containerCells.decision(forRoles: caller.customRoles, operation) },
            { isOwner ? rules.owner[container.lowercased()]?[operation] : nil },
            { acl.decision(forRoles: caller.systemRoles, operation) },
            { containerCells.decision(forRoles: caller.systemRoles, operation) },
            { rules.global.decision(forRoles: caller.customRoles, operation) },
            { rules.global.decision(forRoles: caller.systemRoles, operation) },
        ]
        for layer in layers {
            if let decision = layer() { return decision == .grant }
        }
        return true
    }
}

extension ContainerPermissions {
    /// Whether no cell is set: everything is allowed.
    package var isEmpty: Bool {
        global.all.isEmpty && containers.isEmpty && owner.isEmpty
    }

    /// Whether `caller` may perform `operation` on an asset of `container` that has no ACL of
    /// its own (a geo point, a channel's messages), owned by `ownerID`.
    package func allows(_ caller: PermissionCaller, _ operation: Operation, container: String, ownerID: String? = nil)
        -> Bool
    {
        PermissionOracle.allows(
            caller, operation, container: container, ownerID: ownerID, acl: PermissionMatrix(), rules: self)
    }
}
