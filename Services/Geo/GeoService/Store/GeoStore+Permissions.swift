import DataEngine
import InternalProtocol
import Permissions
import PostgresNIO

/// Category permission cells in `geo.category_permissions`: one row per (category, principal,
/// operation), the category lower-cased (`''` is the global matrix `*`), the principal a user, a
/// role or (kind `owner`) the category's owner policy. A missing row is INHERIT.
extension GeoStore {
    /// Every cell of the app's categories and its global matrix.
    func categoryRules(app: String) async throws -> CategoryRules {
        let rows = try await database.query(
            """
            SELECT category, principal_kind, principal, operation, decision FROM geo.category_permissions
            WHERE app_id = \(app)
            """, logger: logger)
        var rules = CategoryRules()
        for try await (category, kind, name, operationText, decisionText) in rows.decode((String, String, String, String, String).self) {
            guard let operation = GeoOperation(rawValue: operationText), let decision = PermissionDecision(rawValue: decisionText)
            else { continue }
            if kind == CategoryPrincipal.ownerKind {
                rules.rules.owner[category, default: [:]][operation] = decision
            } else if let principal = Principal(kind: kind, name: name) {
                if category.isEmpty {
                    rules.rules.global.set(principal, operation, decision)
                } else {
                    rules.rules.containers[category, default: PermissionMatrix()].set(principal, operation, decision)
                }
            }
        }
        return rules
    }

    /// Sets (`decision` nil: clears) one cell of `category` (`*` for the global matrix).
    func setCategoryRule(
        app: String, category: String, principal: CategoryPrincipal, operation: GeoOperation, decision: PermissionDecision?
    ) async throws {
        let key = category == "*" ? "" : category.lowercased()
        let (kind, name) = principal.parts
        // The change and its announcement are one statement: every instance's cache hears of it at commit.
        if let decision {
            try await database.query(
                """
                WITH changed AS (
                    INSERT INTO geo.category_permissions (app_id, category, principal_kind, principal, operation, decision)
                    VALUES (\(app), \(key), \(kind), \(name), \(operation.rawValue), \(decision.rawValue))
                    ON CONFLICT (app_id, category, principal_kind, principal, operation) DO UPDATE SET decision = excluded.decision
                    RETURNING 1)
                SELECT pg_notify(\(CategoryRulesCache.channel), \(app)) FROM (SELECT count(*) FROM changed) c
                """, logger: logger)
        } else {
            try await database.query(
                """
                WITH changed AS (
                    DELETE FROM geo.category_permissions WHERE app_id = \(app) AND category = \(key)
                    AND principal_kind = \(kind) AND principal = \(name) AND operation = \(operation.rawValue)
                    RETURNING 1)
                SELECT pg_notify(\(CategoryRulesCache.channel), \(app)) FROM (SELECT count(*) FROM changed) c
                """, logger: logger)
        }
    }

    /// `{"permissions": [{"user"|"role", "permission", "access"}], "owner": [{"permission", "access"}]}`
    /// for `category` (`*` for the global matrix), in a stable order.
    func categoryRuleList(app: String, category: String) async throws -> JSONValue {
        let key = category == "*" ? "" : category.lowercased()
        let rows = try await database.query(
            """
            SELECT principal_kind, principal, operation, decision FROM geo.category_permissions
            WHERE app_id = \(app) AND category = \(key) ORDER BY principal_kind, principal, operation
            """, logger: logger)
        var cells: [JSONValue] = []
        var owner: [JSONValue] = []
        for try await (kind, name, operation, decision) in rows.decode((String, String, String, String).self) {
            let access: [(String, JSONValue)] = [("permission", .string(operation)), ("access", .string(decision))]
            if kind == CategoryPrincipal.ownerKind {
                owner.append(.object(JSONObject(access)))
            } else {
                cells.append(.object(JSONObject([(kind, .string(name))] + access)))
            }
        }
        return .object(JSONObject([("permissions", .array(cells)), ("owner", .array(owner))]))
    }
}

/// Whom a category cell is for: a user, a role, or the owner of each point (the owner policy).
enum CategoryPrincipal: Sendable {
    case principal(Principal)
    case owner

    /// The stored kind of an owner-policy cell.
    static let ownerKind = "owner"

    /// The stored kind and name.
    var parts: (kind: String, name: String) {
        switch self {
        case .principal(let principal): principal.parts
        case .owner: (Self.ownerKind, "")
        }
    }
}
