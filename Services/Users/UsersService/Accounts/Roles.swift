import DataEngine
import InternalProtocol
import PostgresNIO

/// SQL over `users.roles` and `users.user_roles`: an app's custom roles and their members.
enum Roles {
    /// The longest role name.
    static let nameLimit = 100

    /// `name` if it can name a custom role: non-empty, within the limit, no control characters
    /// and not a system role (3038 for a missing name, 3058 otherwise).
    static func validName(_ name: String?, refusal: ErrorEnvelope) throws -> String {
        guard let name, !name.isEmpty else { throw UserError.missingRoleArguments }
        guard name.count <= nameLimit,
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }),
            !SystemRoles.all.contains(name)
        else { throw refusal }
        return name
    }

    /// `name` if a new custom role may have it, else 400.
    static func validNewName(_ name: String) throws -> String {
        try validName(
            name,
            refusal: .badRequest("'\(name)' cannot name a custom role: system role, too long or control characters"))
    }

    /// The app's custom roles by name.
    static func list(appID: String, session: DatabaseSession) async throws -> [String] {
        var sql = SQL("SELECT name FROM users.roles WHERE app_id = ")
        sql.bind(.text(appID))
        sql.append(" ORDER BY name")
        return try await session.column(sql, as: String.self)
    }

    /// Creates the role; false when it already existed.
    static func create(appID: String, name: String, session: DatabaseSession) async throws -> Bool {
        var sql = SQL("INSERT INTO users.roles (app_id, name) VALUES (")
        sql.bind(all: [.text(appID), .text(name)])
        sql.append(") ON CONFLICT DO NOTHING RETURNING name")
        return try await !session.column(sql, as: String.self).isEmpty
    }

    /// Deletes the role and its memberships; the former members, or nil when there was no such role.
    static func delete(appID: String, name: String, session: DatabaseSession) async throws -> [String]? {
        // Memberships first, with RETURNING: a member added meanwhile is still announced.
        var memberships = SQL("DELETE FROM users.user_roles WHERE app_id = ")
        memberships.bind(.text(appID))
        memberships.append(" AND role_name = ")
        memberships.bind(.text(name))
        memberships.append(" RETURNING user_id")
        let users = try await session.column(memberships, as: String.self)
        var sql = SQL("DELETE FROM users.roles WHERE app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND name = ")
        sql.bind(.text(name))
        sql.append(" RETURNING name")
        return try await session.column(sql, as: String.self).isEmpty ? nil : users
    }

    /// Deletes the role and announces each former member, so cached identities lose it; 2005
    /// when there is no such role.
    static func deleteAnnouncing(appID: String, name: String, session: DatabaseSession) async throws {
        try await session.transaction { session in
            guard let members = try await delete(appID: appID, name: name, session: session) else {
                throw UserError.unknownRole
            }
            for member in members { try await Sessions.announce(appID: appID, userID: member, session: session) }
        }
    }

    static func exists(appID: String, name: String, session: DatabaseSession) async throws -> Bool {
        var sql = SQL("SELECT name FROM users.roles WHERE app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND name = ")
        sql.bind(.text(name))
        return try await !session.column(sql, as: String.self).isEmpty
    }

    /// Adds the user to the role (idempotent); false when the role does not exist.
    static func assign(appID: String, userID: String, role: String, session: DatabaseSession) async throws -> Bool {
        var sql = SQL("INSERT INTO users.user_roles (app_id, user_id, role_name) SELECT app_id, ")
        sql.bind(.text(userID))
        sql.append(", name FROM users.roles WHERE app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND name = ")
        sql.bind(.text(role))
        sql.append(" ON CONFLICT DO NOTHING")
        _ = try await session.rows(sql)
        return try await exists(appID: appID, name: role, session: session)
    }

    /// Removes the user from the role; false when the user did not have it.
    static func unassign(appID: String, userID: String, role: String, session: DatabaseSession) async throws -> Bool {
        var sql = SQL("DELETE FROM users.user_roles")
        Credentials.whereUser(appID, userID, into: &sql)
        sql.append(" AND role_name = ")
        sql.bind(.text(role))
        sql.append(" RETURNING role_name")
        return try await !session.column(sql, as: String.self).isEmpty
    }

    /// The custom roles of each of `userIDs` by name (users without any are absent).
    static func of(appID: String, userIDs: [String], session: DatabaseSession) async throws -> [String: [String]] {
        guard !userIDs.isEmpty else { return [:] }
        var sql = SQL("SELECT user_id, array_agg(role_name ORDER BY role_name) FROM users.user_roles WHERE app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND user_id IN (")
        sql.bind(all: userIDs.map(SQLValue.text))
        sql.append(") GROUP BY user_id")
        var roles: [String: [String]] = [:]
        for row in try await session.rows(sql) {
            let (userID, names) = try row.decode((String, [String]).self)
            roles[userID] = names
        }
        return roles
    }

    /// The ids of the role's members.
    static func members(appID: String, role: String, session: DatabaseSession) async throws -> [String] {
        var sql = SQL("SELECT user_id FROM users.user_roles WHERE app_id = ")
        sql.bind(.text(appID))
        sql.append(" AND role_name = ")
        sql.bind(.text(role))
        return try await session.column(sql, as: String.self)
    }
}
