import InternalProtocol

/// A permission cell: GRANT or DENY; a missing cell is INHERIT (the next layer decides).
package enum PermissionDecision: String, Sendable, Codable {
    case grant = "GRANT"
    case deny = "DENY"
}

/// Whom a permission names: one user, one role, or (`"*"`) every user or every role.
package enum Principal: Hashable, Sendable {
    case user(String)
    case role(String)

    /// The wildcard `"*"`.
    package static let everyone = "*"

    /// `("user" | "role", name)` as stored and sent.
    package var parts: (kind: String, name: String) {
        switch self {
        case .user(let name): ("user", name)
        case .role(let name): ("role", name)
        }
    }

    /// The principal from its stored parts; nil for an unknown kind.
    package init?(kind: String, name: String) {
        switch kind {
        case "user": self = .user(name)
        case "role": self = .role(name)
        default: return nil
        }
    }
}

/// The permission cells of one subject (an object's ACL, a table, the app's global matrix):
/// who may or may not do which operation.
package struct PermissionMatrix<Operation: PermissionOperation>: Sendable, Equatable {
    private var cells: [Principal: [Operation: PermissionDecision]] = [:]

    /// Empty: every cell inherits.
    package init() {}

    /// Sets (or, with nil, clears) one cell.
    package mutating func set(_ principal: Principal, _ operation: Operation, _ decision: PermissionDecision?) {
        cells[principal, default: [:]][operation] = decision
    }

    /// Every set cell, ordered by principal kind, name and operation.
    package var all: [(principal: Principal, operation: Operation, decision: PermissionDecision)] {
        cells.flatMap { principal, row in row.map { (principal: principal, operation: $0.key, decision: $0.value) } }
            .sorted { left, right in
                (left.principal.parts.0, left.principal.parts.1, left.operation.rawValue)
                    < (right.principal.parts.0, right.principal.parts.1, right.operation.rawValue)
            }
    }

    /// The cell of `principal` for `operation`, if set.
    package func decision(_ principal: Principal, _ operation: Operation) -> PermissionDecision? {
        cells[principal]?[operation]
    }

    /// The user's own cell, else the every-user cell.
    package func decision(forUser user: String?, _ operation: Operation) -> PermissionDecision? {
        if let user, let own = decision(.user(user), operation) { return own }
        return decision(.user(Principal.everyone), operation)
    }

    /// DENY if any of `roles` denies, GRANT if any grants, else nil.
    package func decision(forRoles roles: [String], _ operation: Operation) -> PermissionDecision? {
        let decisions = roles.compactMap { decision(.role($0), operation) }
        if decisions.contains(.deny) { return .deny }
        return decisions.isEmpty ? nil : .grant
    }
}

/// The data service's cells: operations on tables and objects.
package typealias PermissionCells = PermissionMatrix<DataOperation>

/// The app-wide, row-independent part of the model for one service: global permissions per
/// role, container permissions (a data table; a file directory, channel or geo category) per
/// user and role, and each container's owner policy.
package struct ContainerPermissions<Operation: PermissionOperation>: Sendable, Equatable {
    /// The global matrix (roles only).
    package var global = PermissionMatrix<Operation>()
    /// Per container (lower-cased name).
    package var containers: [String: PermissionMatrix<Operation>] = [:]
    /// Owner policy per container (lower-cased name): what an asset's owner may do with it.
    package var owner: [String: [Operation: PermissionDecision]] = [:]
    /// Per container (lower-cased name), the operations some asset's ACL names: only for these
    /// can an asset's ACL decide, so only these need the per-asset ACL look-ups.
    package var aclOperations: [String: Set<Operation>] = [:]

    /// No rules: everything inherits down to the permissive default.
    package init() {}
}

/// The data service's rules: tables are its containers, objects its assets.
package typealias PermissionRules = ContainerPermissions<DataOperation>

/// The caller as the model sees it: the user (if logged in) and the roles, split into the
/// custom roles (layers 2, 4, 8) and the system roles (layers 6, 7, 9). The wildcard role
/// `"*"` counts as a system role, since every caller has it.
package struct PermissionCaller: Sendable, Equatable {
    package var userID: String?
    package var customRoles: [String]
    package var systemRoles: [String]

    /// The caller of a request.
    package init(_ identity: Identity) {
        userID = identity.userId
        customRoles = identity.roles.filter { !SystemRoles.all.contains($0) }
        systemRoles = identity.roles.filter { SystemRoles.all.contains($0) } + [Principal.everyone]
    }

    /// A caller from parts (tests).
    package init(userID: String?, customRoles: [String], systemRoles: [String]) {
        self.userID = userID
        self.customRoles = customRoles
        self.systemRoles = systemRoles + [Principal.everyone]
    }
}
