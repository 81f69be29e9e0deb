import DataEngine
import InternalProtocol
import Permissions

/// A QuickBlox record's permissions: for read, update and delete, who may do it — `open`
/// (everyone), `owner`, `not_allowed` (nobody but the owner), `open_for_users_ids` (these users)
/// or `open_for_groups` (users holding these roles: QuickBlox's user groups are this product's
/// roles). They are kept as the object's ACL cells, so every route decides by them:
///
/// | access | cells for the operation |
/// |---|---|
/// | `open` | every user GRANT |
/// | `owner` | every user DENY, the owner GRANT |
/// | `not_allowed` | as `owner`, and every role DENY (which never decides: it marks the choice) |
/// | `open_for_users_ids` | every user DENY, the owner and each user GRANT |
/// | `open_for_groups` | each role GRANT, the owner GRANT, the system roles DENY |
///
/// An operation without cells follows the table's rules and reads back as `open`. The system
/// roles' cells are the permission layers' sixth: a table rule for the user, every user or a
/// custom role the caller holds decides before them.
struct QuickBloxPermissions: Sendable, Equatable {
    /// Who may perform one operation.
    enum Access: Sendable, Equatable {
        case open, owner, notAllowed
        case users([String])
        case groups([String])
    }

    /// The operations a record's permissions name, in QuickBlox's words.
    static let operations: [(name: String, operation: DataOperation)] = [
        ("read", .find), ("update", .update), ("delete", .remove),
    ]

    /// At most this many users or groups per operation.
    static let principalLimit = 100

    /// The access per operation the record sets.
    var access: [DataOperation: Access] = [:]

    /// The permissions a body's `permissions/<operation>/<access|ids|groups>` entries set.
    init(entries: [QuickBloxWrite.Entry]) throws {
        var byOperation: [String: [String: JSONValue]] = [:]
        for entry in entries {
            guard entry.path.count == 2 else {
                throw QuickBloxError.malformed("'permissions' takes permissions[read|update|delete][access|ids|groups]")
            }
            byOperation[entry.path[0], default: [:]][entry.path[1]] = entry.value
        }
        for (name, fields) in byOperation {
            guard let operation = Self.operations.first(where: { $0.name == name })?.operation else {
                throw QuickBloxError.malformed("Permissions are set for read, update and delete, not '\(name)'")
            }
            access[operation] = try Self.access(fields, for: name)
        }
    }

    /// Reads back an object's ACL cells (`[{"user"|"role", "permission", "access"}]`).
    init(cells: [JSONValue], owner: String?) {
        for (_, operation) in Self.operations {
            let mine = cells.compactMap(\.object).filter { $0["permission"]?.string == operation.permissionName }
            access[operation] = Self.access(reading: mine, owner: owner)
        }
    }

    private static func access(_ fields: [String: JSONValue], for name: String) throws -> Access {
        switch fields["access"]?.string {
        case "open": return .open
        case "owner": return .owner
        case "not_allowed": return .notAllowed
        case "open_for_users_ids": return .users(try principals(fields["ids"], "ids", name))
        case "open_for_groups": return .groups(try principals(fields["groups"], "groups", name))
        default:
            throw QuickBloxError.malformed(
                "permissions[\(name)][access] must be open, owner, not_allowed, open_for_users_ids or open_for_groups")
        }
    }

    /// `ids`/`groups`: a JSON array of strings or numbers, or comma-separated text.
    private static func principals(_ value: JSONValue?, _ key: String, _ name: String) throws -> [String] {
        let items: [String]
        switch value {
        case .string(let text)?: items = text.split(separator: ",").map(String.init)
        case .array(let values)?:
            items = try values.map { value in
                switch value {
                case .string(let text): return text
                case .integer(let number): return String(number)
                default: throw QuickBloxError.malformed("permissions[\(name)][\(key)] lists strings or numbers")
                }
            }
        default: items = []
        }
        guard (1...principalLimit).contains(items.count), items.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 255 })
        else {
            throw QuickBloxError.malformed(
                "permissions[\(name)][\(key)] names 1 to \(principalLimit) \(key), each 1 to 255 bytes")
        }
        return items
    }

    /// The ACL cells that keep `access` for `operation` on an object owned by `owner`.
    static func cells(_ access: Access, operation: DataOperation, owner: String?) -> [PermissionChange] {
        func cell(_ decision: PermissionDecision, _ principal: Principal) -> PermissionChange {
            PermissionChange(decision: decision, operation: operation, principal: principal)
        }
        let ownerGrant = owner.map { [cell(.grant, .user($0))] } ?? []
        switch access {
        case .open:
            return [cell(.grant, .user(Principal.everyone))]
        case .owner:
            return [cell(.deny, .user(Principal.everyone))] + ownerGrant
        case .notAllowed:
            return [cell(.deny, .user(Principal.everyone)), cell(.deny, .role(Principal.everyone))] + ownerGrant
        case .users(let ids):
            return [cell(.deny, .user(Principal.everyone))] + ownerGrant
                + ids.filter { $0 != owner }.map { cell(.grant, .user($0)) }
        case .groups(let roles):
            let closed = [SystemRoles.authenticated, SystemRoles.notAuthenticated].map { cell(.deny, .role($0)) }
            return roles.map { cell(.grant, .role($0)) } + ownerGrant + closed
        }
    }

    /// The access one operation's cells keep (the table's rules, read as `open`, without cells).
    private static func access(reading cells: [JSONObject], owner: String?) -> Access {
        func named(_ kind: String, _ decision: String) -> [String] {
            cells.filter { $0["access"]?.string == decision }.compactMap { $0[kind]?.string }
        }
        let grantedUsers = named("user", "GRANT")
        if grantedUsers.contains(Principal.everyone) || cells.isEmpty { return .open }
        if named("role", "DENY").contains(Principal.everyone) { return .notAllowed }
        let groups = named("role", "GRANT")
        if !groups.isEmpty { return .groups(groups) }
        let others = grantedUsers.filter { $0 != owner }
        return others.isEmpty ? .owner : .users(others)
    }

    /// `{"read": {"access": "open"}, "update": {"access": "open_for_users_ids", "ids": [...]}, …}`.
    var json: JSONValue {
        .object(
            JSONObject(
                Self.operations.map { name, operation in
                    (name, Self.json(access[operation] ?? .open))
                }))
    }

    private static func json(_ access: Access) -> JSONValue {
        let (name, list): (String, (String, [String])?) =
            switch access {
            case .open: ("open", nil)
            case .owner: ("owner", nil)
            case .notAllowed: ("not_allowed", nil)
            case .users(let ids): ("open_for_users_ids", ("ids", ids))
            case .groups(let roles): ("open_for_groups", ("groups", roles))
            }
        var members: [(key: String, value: JSONValue)] = [("access", .string(name))]
        if let (key, values) = list { members.append((key, .array(values.map(JSONValue.string)))) }
        return .object(JSONObject(members))
    }
}
