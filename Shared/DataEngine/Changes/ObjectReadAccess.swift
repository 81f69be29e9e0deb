import InternalProtocol
import Permissions

/// Which objects of one table a subscriber may read, decided as a find's filter decides
/// (``PermissionFilter``): once for every object when no row layer is left (the whole group of
/// subscribers with that identity gets one answer), else per object from its owner and its ACL
/// cells (read once per batch of events, ``ObjectACLs``).
package struct ObjectReadAccess: Sendable {
    enum Decision: Sendable {
        case constant(Bool)
        case perObject(PermissionPlan<DataOperation>)
    }

    let decision: Decision

    /// The access of `identity` to `table` under `catalog`'s permissions.
    package init(_ identity: Identity, table: String, catalog: AppCatalog) {
        if identity.isSystem {
            decision = .constant(true)
            return
        }
        let rules = UsersTableGuard.rules(catalog.permissions, for: identity, table: table)
        let plan = PermissionPlan(PermissionCaller(identity), DataOperation.find, container: table, rules: rules)
        decision = plan.constantDecision.map { .constant($0 == .grant) } ?? .perObject(plan)
    }

    /// The same answer for every object, when there is one.
    package var constant: Bool? {
        if case .constant(let allowed) = decision { return allowed }
        return nil
    }

    /// Whether objects of `table` have Find ACL cells to read (only then can a per-object
    /// decision depend on them).
    package static func tableHasACLs(_ table: String, catalog: AppCatalog) -> Bool {
        catalog.permissions.aclOperations[table.lowercased()]?.contains(.find) == true
    }

    /// Whether the object `objectId` owned by `ownerId` may be read.
    package func allows(objectId: String, ownerId: String?, acls: ObjectACLs) -> Bool {
        switch decision {
        case .constant(let allowed): return allowed
        case .perObject(let plan):
            for layer in plan.rowLayers {
                if let decided = Self.decide(layer, objectId: objectId, ownerId: ownerId, acls: acls) {
                    return decided == .grant
                }
            }
            return plan.fallback == .grant
        }
    }

    private static func decide(
        _ layer: PermissionPlan<DataOperation>.RowLayer, objectId: String, ownerId: String?, acls: ObjectACLs
    ) -> PermissionDecision? {
        let cells = acls.cells[objectId] ?? []
        switch layer {
        case .userACL(let user):
            let users = cells.filter { $0.kind == "user" }
            if let user, let own = users.first(where: { $0.principal == user }) { return own.decision }
            return users.first { $0.principal == Principal.everyone }?.decision
        case .roleACL(let roles):
            let decisions = cells.filter { $0.kind == "role" && roles.contains($0.principal) }.map(\.decision)
            if decisions.contains(.deny) { return .deny }
            return decisions.isEmpty ? nil : .grant
        case .owner(let user, let decision):
            return ownerId == user ? decision : nil
        }
    }
}

/// Objects' Find ACL cells, by object id.
package struct ObjectACLs: Sendable {
    /// One cell: a user or role (or every user, `*`) granted or denied.
    package struct Cell: Sendable {
        package var kind: String
        package var principal: String
        package var decision: PermissionDecision
    }

    package var cells: [String: [Cell]] = [:]

    /// No cells.
    package static let none = ObjectACLs()
}
