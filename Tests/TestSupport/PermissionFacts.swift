import InternalProtocol
import Permissions
import PropertyBased

/// Random apps for the property tests: a list of permission facts (table, global, owner and
/// object-ACL cells on table `Doc`), shrinkable fact by fact, and random callers. The same facts
/// feed the oracle in memory and the store in SQL.
package struct PermissionFact: Sendable, CustomStringConvertible {
    package enum Kind: Int, CaseIterable, Sendable {
        case table, global, owner, acl
    }

    package let kind: Kind
    package let principal: Principal
    package let operation: DataOperation
    package let decision: PermissionDecision
    /// For `.acl`: which of the objects.
    package let object: Int

    package static let users = ["u1", "u2", "u3"]
    package static let customRoles = ["Editors", "Viewers"]
    package static let systemRoles = ["AuthenticatedUser", "NotAuthenticatedUser", "RestUser", "JSUser", "*"]
    package static let principals: [Principal] =
        (users + ["*"]).map(Principal.user) + (customRoles + systemRoles).map(Principal.role)
    package static let operations: [DataOperation] = [.find, .update, .remove]
    /// How many objects the ACL facts may name.
    package static let objectCount = 8

    /// Creates a fact.
    package init(kind: Kind, principal: Principal, operation: DataOperation, decision: PermissionDecision, object: Int)
    {
        self.kind = kind
        self.principal = principal
        self.operation = operation
        self.decision = decision
        self.object = object
    }

    package var description: String {
        "\(kind) \(principal.parts.kind):\(principal.parts.name) \(operation.rawValue) \(decision.rawValue)"
            + (kind == .acl ? " #\(object)" : "")
    }

    /// One fact; global cells name roles only (a user principal becomes the every-role cell).
    package static let generator = zip(
        Gen.int(in: 0...3), Gen.int(in: 0...(principals.count - 1)), Gen.int(in: 0...2), Gen.bool,
        Gen.int(in: 0...(objectCount - 1))
    ).map { parts in
        let kind = Kind(rawValue: parts.0)!
        var principal = principals[parts.1]
        if kind == .global, case .user = principal { principal = .role("*") }
        return PermissionFact(
            kind: kind, principal: principal, operation: operations[parts.2], decision: parts.3 ? .grant : .deny,
            object: parts.4)
    }

    /// A random app: up to `count` facts.
    package static func app(upTo count: Int) -> Generator<[PermissionFact], some SendableSequenceType> {
        generator.array(of: 0...count)
    }
}

/// The oracle's inputs built from facts (later facts overwrite earlier ones in the same cell,
/// as the store's upserts do).
package struct PermissionScenario: Sendable {
    package var rules = PermissionRules()
    package var acls: [Int: PermissionCells] = [:]

    package init(_ facts: [PermissionFact]) {
        for fact in facts {
            switch fact.kind {
            case .table:
                rules.containers["doc", default: PermissionCells()].set(fact.principal, fact.operation, fact.decision)
            case .global: rules.global.set(fact.principal, fact.operation, fact.decision)
            case .owner: rules.owner["doc", default: [:]][fact.operation] = fact.decision
            case .acl:
                acls[fact.object, default: PermissionCells()].set(fact.principal, fact.operation, fact.decision)
                rules.aclOperations["doc", default: []].insert(fact.operation)
            }
        }
    }

    /// Whether the oracle lets `caller` perform `operation` on object `index` owned by `owner`.
    package func allows(_ caller: Identity, _ operation: DataOperation, object index: Int, owner: String?) -> Bool {
        PermissionOracle.allows(
            PermissionCaller(caller), operation, container: "Doc", ownerID: owner,
            acl: acls[index] ?? PermissionCells(),
            rules: rules)
    }
}

/// Random callers: a user (or none) with some custom roles, through the REST or JS key.
package enum PermissionCallers {
    package static func generator(appID: String) -> Generator<Identity, some SendableSequenceType> {
        zip(Gen.int(in: 0...3), Gen.bool, Gen.bool, Gen.bool).map { parts in
            let user = parts.0 < 3 ? PermissionFact.users[parts.0] : nil
            let key: APIKeyKind = parts.1 ? .rest : .js
            let custom = user == nil ? [] : [parts.2 ? "Editors" : nil, parts.3 ? "Viewers" : nil].compactMap { $0 }
            var identity = Identity(
                appId: appID, keyKind: key, userId: user,
                roles: [user == nil ? SystemRoles.notAuthenticated : SystemRoles.authenticated, key.role] + custom)
            identity.sessionId = user
            return identity
        }
    }

    /// Who owns object `index`: the users round-robin, every fourth object nobody.
    package static func owner(of index: Int) -> String? {
        index % 4 == 3 ? nil : PermissionFact.users[index % 3]
    }
}
