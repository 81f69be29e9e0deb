import InternalProtocol
import Logging
import Permissions
import PostgresNIO
import PostgresSupport

/// The permission cells of one kind of container (geo categories, messaging channels) kept in
/// one table: a row per (app, container, principal, operation), the container lower-cased (`''`
/// is the global matrix `*`), the principal a user, a role or (kind `owner`) the container's
/// owner policy. A missing row is INHERIT. Every change is announced on ``channel`` in the
/// statement that makes it, so each instance's ``AnnouncedAppCache`` hears of it at commit.
package struct ContainerRuleTable<Operation: PermissionOperation>: Sendable {
    let database: PostgresClient
    let logger: Logger
    /// The schema-qualified table: a constant of the service, never from a request.
    let table: String
    /// Its container column: a constant of the service, never from a request.
    let containerColumn: String
    /// The `LISTEN/NOTIFY` channel that announces an app's changed cells.
    package let channel: String

    /// A table of cells with columns `app_id`, `containerColumn`, `principal_kind`, `principal`,
    /// `operation` and `decision`, keyed by all but the last.
    package init(database: PostgresClient, logger: Logger, table: String, containerColumn: String, channel: String) {
        self.database = database
        self.logger = logger
        self.table = table
        self.containerColumn = containerColumn
        self.channel = channel
    }

    /// The stored form of a container name (`*` is the global matrix).
    package static func key(_ container: String) -> String {
        container == "*" ? "" : container.lowercased()
    }

    /// Every cell of the app's containers and its global matrix.
    package func rules(app: String) async throws -> ContainerPermissions<Operation> {
        let rows = try await database.query(
            """
            SELECT \(unescaped: containerColumn), principal_kind, principal, operation, decision FROM \(unescaped: table)
            WHERE app_id = \(app)
            """, logger: logger)
        var rules = ContainerPermissions<Operation>()
        for try await (container, kind, name, operationText, decisionText) in rows.decode(
            (String, String, String, String, String).self)
        {
            guard let operation = Operation(rawValue: operationText),
                let decision = PermissionDecision(rawValue: decisionText)
            else { continue }
            if kind == ContainerPrincipal.ownerKind {
                rules.owner[container, default: [:]][operation] = decision
            } else if let principal = Principal(kind: kind, name: name) {
                if container.isEmpty {
                    rules.global.set(principal, operation, decision)
                } else {
                    rules.containers[container, default: PermissionMatrix()].set(principal, operation, decision)
                }
            }
        }
        return rules
    }

    /// Sets (`decision` nil: clears) one cell of `container` (`*` for the global matrix).
    package func set(
        app: String, container: String, principal: ContainerPrincipal, operation: Operation,
        decision: PermissionDecision?
    ) async throws {
        let key = Self.key(container)
        let (kind, name) = principal.parts
        // The change and its announcement are one statement: every instance hears of it at commit.
        if let decision {
            try await database.run(
                """
                WITH changed AS (
                    INSERT INTO \(unescaped: table) (app_id, \(unescaped: containerColumn), principal_kind, principal, operation, decision)
                    VALUES (\(app), \(key), \(kind), \(name), \(operation.rawValue), \(decision.rawValue))
                    ON CONFLICT (app_id, \(unescaped: containerColumn), principal_kind, principal, operation)
                    DO UPDATE SET decision = excluded.decision
                    RETURNING 1)
                SELECT pg_notify(\(channel), \(app)) FROM (SELECT count(*) FROM changed) c
                """, logger: logger)
        } else {
            try await database.run(
                """
                WITH changed AS (
                    DELETE FROM \(unescaped: table) WHERE app_id = \(app) AND \(unescaped: containerColumn) = \(key)
                    AND principal_kind = \(kind) AND principal = \(name) AND operation = \(operation.rawValue)
                    RETURNING 1)
                SELECT pg_notify(\(channel), \(app)) FROM (SELECT count(*) FROM changed) c
                """, logger: logger)
        }
    }

    /// `{"permissions": [{"user"|"role", "permission", "access"}], "owner": [{"permission", "access"}]}`
    /// for `container` (`*` for the global matrix), in a stable order.
    package func list(app: String, container: String) async throws -> JSONValue {
        let rows = try await database.query(
            """
            SELECT principal_kind, principal, operation, decision FROM \(unescaped: table)
            WHERE app_id = \(app) AND \(unescaped: containerColumn) = \(Self.key(container))
            ORDER BY principal_kind, principal, operation
            """, logger: logger)
        var cells: [JSONValue] = []
        var owner: [JSONValue] = []
        for try await (kind, name, operation, decision) in rows.decode((String, String, String, String).self) {
            let access: [(String, JSONValue)] = [("permission", .string(operation)), ("access", .string(decision))]
            if kind == ContainerPrincipal.ownerKind {
                owner.append(.object(JSONObject(access)))
            } else {
                cells.append(.object(JSONObject([(kind, .string(name))] + access)))
            }
        }
        return .object(JSONObject([("permissions", .array(cells)), ("owner", .array(owner))]))
    }
}

/// Whom a container cell is for: a user, a role, or the owner of each asset (the owner policy).
package enum ContainerPrincipal: Sendable {
    case principal(Principal)
    case owner

    /// The stored kind of an owner-policy cell.
    package static let ownerKind = "owner"

    /// The stored kind and name.
    package var parts: (kind: String, name: String) {
        switch self {
        case .principal(let principal): principal.parts
        case .owner: (Self.ownerKind, "")
        }
    }
}
