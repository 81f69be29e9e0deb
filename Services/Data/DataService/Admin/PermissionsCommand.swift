import DataEngine
import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport
import ServiceRuntime

/// `data-service permissions …`: the administrator's view of an app's permissions, the same JSON
/// the server-code-key API answers. It applies data-service's migrations first and acts as the
/// system itself, so an app's own rules never hide them.
/// - `permissions show APP_ID TABLE` — the table's cells and owner policy (`*`: the global matrix).
/// - `permissions show APP_ID TABLE OBJECT_ID` — one object's ACL.
package enum PermissionsCommand {
    static let usage = "usage: data-service permissions show APP_ID (TABLE | '*') [OBJECT_ID]"

    /// Runs the command and returns what to print.
    package static func run(_ arguments: [String], database: DatabaseConfiguration, logger: Logger) async throws
        -> String
    {
        guard arguments.first == "show", (3...4).contains(arguments.count) else { throw UsageError(usage) }
        let (appID, table) = (arguments[1], arguments[2])
        return try await PostgresClient.with(database, logger: logger) { client in
            try await MigrationRunner(owner: DataService.name.rawValue, migrations: DataService.migrations)
                .apply(on: client, logger: logger)
            let engine = DataEngine(database: client, logger: logger)
            var administrator = Identity(appId: appID, keyKind: .serverCode, roles: [APIKeyKind.serverCode.role])
            administrator.isSystem = true
            let cells =
                arguments.count == 4
                ? try await engine.objectPermissions(
                    table: table, objectID: arguments[3], identity: administrator, logger: logger)
                : try await engine.rulePermissions(table: table == "*" ? nil : table, identity: administrator)
            return cells.jsonText
        }
    }
}
