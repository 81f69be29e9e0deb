import InternalProtocol
import Permissions

/// `Users` rows belong to users-service: the data API reads and edits them only as the users API
/// allows, whatever form a write takes (save, update, upsert, bulk, deep save, unit of work,
/// relation change, object ACL, file field), because every form asks ``AccessControl`` for its
/// grant and checks its properties in `DataEngine.schema(for:objects:createTable:context:)`.
/// - Only the user (a user-token for the row's `objectId`) or the server-code key may update or
///   delete a user's row, change its relations or its ACL: a row filter in the grant, so a bulk
///   write or an upsert's update passes over other users' rows and a single-object write is
///   refused (1023); without a user token (and without the server-code key) nothing is allowed.
/// - Only the server-code key creates rows here; users register through users-service (a data
///   save of one user with its `password` is handed to it).
/// - The properties users-service manages — `password`, `email`, `userStatus`, `lastLogin` and
///   the identity property, which users-service always makes a unique column — are never written
///   by the engine for a client (1022). A single-object update carrying a password, an email or
///   an identity is handed to users-service (`users.save`), which applies `PUT /users/{id}`'s
///   rules (and ignores `userStatus` and `lastLogin`, as that call does).
/// - Callers without a user token and without the server-code key may not find users (1023),
///   unless the app's table rules set Find for `NotAuthenticatedUser` on `Users` themselves.
///
/// users-service's own writes (``Identity/isSystem``) are not guarded: it applies these rules.
package enum UsersTableGuard {
    /// Whether `table` names the app's `Users` table (table names match ignoring case).
    package static func guards(_ table: String) -> Bool {
        table.lowercased() == "users"
    }

    /// The operations that change or delete an existing row.
    static let rowWrites: Set<DataOperation> = [.update, .remove, .permission, .addRelation, .deleteRelation]

    /// Properties (lower-cased) the users API changes under its rules, besides the identity property.
    static let credentialNames: Set<String> = ["password", "email"]
    /// Properties (lower-cased) only users-service's own flows set (login, status, confirmation).
    static let accountStateNames: Set<String> = ["userstatus", "lastlogin"]

    /// What the guard adds to `operation` on `table` for `identity`: nil when nothing, else the
    /// filter admitting only the caller's own row. Throws 1023 when no row may be written.
    static func rowGrant(_ identity: Identity, _ operation: DataOperation, table: String) throws -> AccessGrant? {
        guard !identity.isSystem, identity.keyKind != .serverCode, guards(table) else { return nil }
        if operation == .create {
            throw refusal(
                operation, "users are created by registration (POST /users/register, or a data save with a password)")
        }
        guard rowWrites.contains(operation) else { return nil }
        guard let userID = identity.userId else {
            throw refusal(
                operation, "a user's row is changed only by that user (with their user-token) or the server-code key")
        }
        return AccessGrant { sql, alias in
            sql.append("\(alias).\"objectId\" = ")
            sql.bind(.text(userID))
        }
    }

    /// The app's rules as they apply to `identity` on `table`: on `Users`, without the server-code
    /// key, `NotAuthenticatedUser` and `GuestUser` (a guest logs in without credentials: one
    /// request away from anonymous) are denied Find unless the table's own cells decide it.
    static func rules(_ rules: PermissionRules, for identity: Identity, table: String) -> PermissionRules {
        guard !identity.isSystem, identity.keyKind != .serverCode, guards(table) else { return rules }
        let key = table.lowercased()
        var adjusted = rules
        for role in [SystemRoles.notAuthenticated, SystemRoles.guest] {
            let principal = Principal.role(role)
            guard rules.containers[key]?.decision(principal, .find) == nil else { continue }
            adjusted.containers[key, default: PermissionCells()].set(principal, .find, .deny)
        }
        return adjusted
    }

    /// Refuses (1022) `objects` written to `Users` that carry a property users-service manages,
    /// unless users-service writes them. `table` is the existing table, if any.
    static func refuseManagedProperties(
        _ objects: [JSONObject], table: TableSchema?, named tableName: String, identity: Identity
    ) throws {
        guard !identity.isSystem, guards(tableName) else { return }
        for object in objects {
            if let key = managedProperty(in: object, table: table) {
                throw DataError.invalidBody(
                    "'\(key)' of a user is set through the users API (PUT /users/{id} or /users/{id}/status), not the data API"
                )
            }
        }
    }

    /// The first property of `object` that the users API changes under its own rules on `Users`
    /// (`table`, when it exists): `password`, `email` or a unique column (the identity property
    /// is one), in any spelling; nil when there is none.
    package static func usersAPIProperty(in object: JSONObject, table: TableSchema?) -> String? {
        object.members.first { member in
            guard !ObjectReader.isIgnored(member.key) else { return false }
            return credentialNames.contains(member.key.lowercased()) || table?.column(named: member.key)?.unique == true
        }?.key
    }

    /// The first property of `object` that only users-service writes on `Users`: one of
    /// ``usersAPIProperty(in:table:)``'s, `userStatus` or `lastLogin`; nil when there is none.
    static func managedProperty(in object: JSONObject, table: TableSchema?) -> String? {
        let state = object.members.first { accountStateNames.contains($0.key.lowercased()) }?.key
        return usersAPIProperty(in: object, table: table) ?? state
    }

    private static func refusal(_ operation: DataOperation, _ reason: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 1023, message: "Permission denied: \(operation.rawValue) on table 'Users': \(reason)", status: 403)
    }
}

extension AccessGrant {
    /// The rows this grant and `other` (nil: every row) both admit.
    func and(_ other: AccessGrant?) -> AccessGrant {
        guard let second = other?.rowFilter else { return self }
        guard let first = rowFilter else { return AccessGrant(rowFilter: second) }
        return AccessGrant { sql, alias in
            sql.append("(")
            first(&sql, alias)
            sql.append(") AND (")
            second(&sql, alias)
            sql.append(")")
        }
    }
}
