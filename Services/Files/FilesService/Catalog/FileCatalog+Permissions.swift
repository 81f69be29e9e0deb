import InternalProtocol
import Permissions
import PostgresNIO
import PostgresSupport

extension FileCatalog {
    /// The cells on the root, on every directory above `path` and on `path` itself, and with
    /// `below` on everything under it too (a listing's entries).
    func rules(app: String, near path: FilePath, below: Bool = false) async throws -> FileRules {
        let chain = ([FilePath.root] + path.ancestors + [path]).map(\.description)
        let (low, high) = Self.below(path)
        let rows = try await database.query(
            """
            SELECT path, principal_kind, principal, operation, decision FROM files.permissions
            WHERE app_id = \(app) AND (path = ANY(\(chain)::text[]) OR (\(below) AND path >= \(low) AND path < \(high)))
            """, logger: logger)
        var rules = FileRules()
        for try await (text, kind, name, operation, decision) in rows.decode(
            (String, String, String, String, String).self)
        {
            guard let principal = Principal(kind: kind, name: name), let operation = FileOperation(rawValue: operation),
                let decision = PermissionDecision(rawValue: decision)
            else { continue }
            rules.cells[try FilePath(decoded: text), default: PermissionMatrix()].set(principal, operation, decision)
        }
        return rules
    }

    /// Sets one cell on `path`.
    func setRule(
        app: String, path: FilePath, principal: Principal, operation: FileOperation, decision: PermissionDecision
    ) async throws {
        let (kind, name) = principal.parts
        try await database.run(
            """
            INSERT INTO files.permissions (app_id, path, principal_kind, principal, operation, decision)
            VALUES (\(app), \(path.description), \(kind), \(name), \(operation.rawValue), \(decision.rawValue))
            ON CONFLICT (app_id, path, principal_kind, principal, operation) DO UPDATE SET decision = excluded.decision
            """, logger: logger)
    }
}
