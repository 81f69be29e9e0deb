/// What the row-independent part of the nine layers leaves for one caller, operation and
/// container (for data: a table, whose rows are the assets): the row-dependent layers still to
/// ask, in order (object ACLs only where the table's ACLs name the operation, the owner check
/// only for a logged-in caller under an owner policy), and the decision once none of them
/// decides. With no row layer left the decision is constant: the data engine then filters
/// nothing or refuses at once, and the gateway can refuse before it routes.
package struct PermissionPlan<Operation: PermissionOperation>: Sendable, Equatable {
    /// A row-dependent layer.
    package enum RowLayer: Sendable, Equatable {
        /// Layer 1: the object's ACL cell for the user, else for every user.
        case userACL(userID: String?)
        /// Layers 2 and 6: the object's ACL cells for these roles (any DENY wins).
        case roleACL(roles: [String])
        /// Layer 5: the owner policy's decision when the caller owns the object.
        case owner(userID: String, decision: PermissionDecision)
    }

    /// The row layers in evaluation order.
    package var rowLayers: [RowLayer]
    /// The decision after the row layers: the first constant layer's, else GRANT.
    package var fallback: PermissionDecision

    /// The decision when it is the same for every row of the table, else nil.
    package var constantDecision: PermissionDecision? { rowLayers.isEmpty ? fallback : nil }

    /// Walks the layers for `caller` doing `operation` in `container`; the walk stops at the first
    /// row-independent layer that decides.
    package init(
        _ caller: PermissionCaller, _ operation: Operation, container: String, rules: ContainerPermissions<Operation>
    ) {
        let key = container.lowercased()
        let cells = rules.containers[key] ?? PermissionMatrix<Operation>()
        let hasACLs = rules.aclOperations[key]?.contains(operation) == true
        var layers: [RowLayer] = []
        if hasACLs {
            layers.append(.userACL(userID: caller.userID))
            if !caller.customRoles.isEmpty { layers.append(.roleACL(roles: caller.customRoles)) }
        }
        rowLayers = layers
        if let decided = cells.decision(forUser: caller.userID, operation)
            ?? cells.decision(forRoles: caller.customRoles, operation)
        {
            fallback = decided
            return
        }
        if let user = caller.userID, let owner = rules.owner[key]?[operation] {
            rowLayers.append(.owner(userID: user, decision: owner))
        }
        if hasACLs { rowLayers.append(.roleACL(roles: caller.systemRoles)) }
        fallback =
            cells.decision(forRoles: caller.systemRoles, operation)
            ?? rules.global.decision(forRoles: caller.customRoles, operation)
            ?? rules.global.decision(forRoles: caller.systemRoles, operation)
            ?? .grant
    }
}
