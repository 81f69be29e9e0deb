import DataEngine
import Foundation
import InternalProtocol
import Logging
import QueryLanguage

extension Accounts {
    /// The most members `GET /users/role/{name}` lists.
    static let roleListLimit = 10_000

    /// The app's custom roles (server-code key).
    package func customRoles(identity: Identity, logger: Logger) async throws -> [String] {
        try Self.requireServerCode(identity)
        return try await Roles.list(appID: identity.appId, session: pool(logger))
    }

    /// Creates a custom role (server-code key); false when it existed already.
    package func createRole(_ name: String, identity: Identity, logger: Logger) async throws -> Bool {
        try Self.requireServerCode(identity)
        return try await Roles.create(appID: identity.appId, name: try Roles.validNewName(name), session: pool(logger))
    }

    /// Deletes a custom role and its memberships (server-code key; 2005 when unknown). Every
    /// former member's cached identities are dropped.
    package func deleteRole(_ name: String, identity: Identity, logger: Logger) async throws {
        try Self.requireServerCode(identity)
        try await Roles.deleteAnnouncing(appID: identity.appId, name: name, session: pool(logger))
    }

    /// `POST /users/assignRole` `{user, roleName}` (server-code key): adds the user (by id or
    /// identity) to a custom role; returns the user's id.
    package func assignRole(body: JSONObject, identity: Identity, logger: Logger) async throws -> String {
        try await changeMembership(body: body, identity: identity, refusal: UserError.cannotAssign, logger: logger) {
            userID, role, session in
            guard try await Roles.assign(appID: identity.appId, userID: userID, role: role, session: session) else {
                throw UserError.unknownRole
            }
        }
    }

    /// `POST /users/unassignRole` `{user, roleName}` (server-code key): 3059 when the user did
    /// not have the role.
    package func unassignRole(body: JSONObject, identity: Identity, logger: Logger) async throws -> String {
        try await changeMembership(body: body, identity: identity, refusal: UserError.cannotUnassign, logger: logger) {
            userID, role, session in
            guard try await Roles.exists(appID: identity.appId, name: role, session: session) else {
                throw UserError.unknownRole
            }
            guard try await Roles.unassign(appID: identity.appId, userID: userID, role: role, session: session) else {
                throw UserError.cannotUnassign
            }
        }
    }

    private func changeMembership(
        body: JSONObject, identity: Identity, refusal: ErrorEnvelope, logger: Logger,
        _ change: @Sendable (String, String, DatabaseSession) async throws -> Void
    ) async throws -> String {
        try Self.requireServerCode(identity)
        guard let user = body["user"]?.string, !user.isEmpty else { throw UserError.missingRoleArguments }
        let role = try Roles.validName(body["roleName"]?.string, refusal: refusal)
        let userID = try await userID(byIdOrIdentity: user, appID: identity.appId, logger: logger)
        try await pool(logger).transaction { session in
            try await change(userID, role, session)
            try await Sessions.announce(appID: identity.appId, userID: userID, session: session)
        }
        return userID
    }

    /// `GET /users/userroles/{id}` (server-code key): the user's custom roles (3057 for an unknown user).
    package func roles(ofUser id: String, identity: Identity, logger: Logger) async throws -> [String] {
        try Self.requireServerCode(identity)
        let userID = try await userID(byIdOrIdentity: id, appID: identity.appId, logger: logger)
        return try await Roles.of(appID: identity.appId, userIDs: [userID], session: pool(logger))[userID] ?? []
    }

    /// `GET /users/role/{name}`: one page of the custom role's members as the data query asks,
    /// each with its `roles` when `loadRoles`; 2005 for a role that does not exist.
    package func users(inRole name: String, query: FindQuery, loadRoles: Bool, identity: Identity, logger: Logger)
        async throws -> String
    {
        guard !SystemRoles.all.contains(name),
            try await Roles.exists(appID: identity.appId, name: name, session: pool(logger))
        else { throw UserError.unknownRole }
        let members = try await Roles.members(appID: identity.appId, role: name, session: pool(logger))
        // The members' ids travel as one bound list; PostgreSQL takes at most 65535 parameters.
        guard members.count <= Self.roleListLimit else {
            throw ErrorEnvelope.badRequest(
                "The role has more than \(Self.roleListLimit) members; find them through /data/Users instead")
        }
        guard !members.isEmpty, try await engine.tableSchema(Self.usersTable, appID: identity.appId) != nil else {
            return "[]"
        }
        var page = query
        let membership = Condition.membership(
            .property(PropertyPath(["objectId"])), members.map { .string($0) }, negated: false)
        page.condition = query.condition.map { .and([$0, membership]) } ?? membership
        let users = try await engine.find(Self.usersTable, query: page, identity: identity, logger: logger)
        guard loadRoles else { return "[" + users.joined(separator: ",") + "]" }
        return try await withRoles(users, appID: identity.appId, logger: logger)
    }

    private func withRoles(_ users: [String], appID: String, logger: Logger) async throws -> String {
        var objects = try users.map { text in
            guard case .object(let object) = try JSONParser.parse(text) else { throw ErrorEnvelope.internalError }
            return object
        }
        let ids = objects.compactMap { $0["objectId"]?.string }
        let roles = try await Roles.of(appID: appID, userIDs: ids, session: pool(logger))
        for index in objects.indices {
            let id = objects[index]["objectId"]?.string ?? ""
            objects[index]["roles"] = .array((roles[id] ?? []).map(JSONValue.string))
        }
        return JSONValue.array(objects.map(JSONValue.object)).jsonText
    }

    /// The objectId of the user whose objectId or identity value is `value`, or 3057.
    func userID(byIdOrIdentity value: String, appID: String, logger: Logger) async throws -> String {
        let policy = try await policy(appID, logger: logger)
        guard try await engine.tableSchema(Self.usersTable, appID: appID) != nil else { throw UserError.userNotFound }
        var query = FindQuery()
        query.condition = .or([
            .comparison(.property(PropertyPath(["objectId"])), .equal, .string(value)),
            .comparison(.property(PropertyPath([policy.identityProperty])), .equal, .string(value)),
        ])
        query.properties = [SelectItem(expression: .property(PropertyPath(["objectId"])), alias: nil)]
        query.pageSize = 2
        let ids = try await engine.find(Self.usersTable, query: query, identity: Self.system(appID), logger: logger)
            .map(Self.objectId(of:))
        guard let id = ids.first(where: { $0 == value }) ?? ids.first else { throw UserError.userNotFound }
        return id
    }
}
