import Configuration
import Foundation
import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport
import ServiceRuntime

/// `users-service apps …`: the administrator's commands for apps and keys. They apply
/// users-service's migrations first, so they work on a fresh database.
/// - `apps create NAME`: creates an app; prints its id and keys as `BAAS_…=` shell lines.
/// - `apps list`: prints `id  name  created` per app.
/// - `apps rotate-key APP KIND|all`: replaces keys of the app with that id or name; prints the new ones.
package enum AppsCommand {
    /// Usage text.
    static let usage = "usage: users-service apps (create NAME | list | rotate-key APP KIND|all)"

    /// Runs the command and returns what to print.
    package static func run(_ arguments: [String], database: DatabaseConfiguration, logger: Logger) async throws
        -> String
    {
        try await withMigratedDatabase(database, logger: logger) { client in
            try await run(arguments, apps: AppRepository(database: client), logger: logger)
        }
    }

    static func run(_ arguments: [String], apps: AppRepository, logger: Logger) async throws -> String {
        switch (arguments.first, arguments.count) {
        case ("create", 2):
            let app = try await apps.create(name: arguments[1], logger: logger)
            return shellLines(appName: app.name, appID: app.id, keys: app.keys)
        case ("list", 1):
            return try await apps.list(logger: logger)
                .map { "\($0.id)  \($0.name)  \($0.created.formatted(.iso8601))" }.joined(separator: "\n")
        case ("rotate-key", 3):
            return try await rotate(app: arguments[1], kind: arguments[2], apps: apps, logger: logger)
        default:
            throw UsageError(usage)
        }
    }

    private static func rotate(app: String, kind: String, apps: AppRepository, logger: Logger) async throws
        -> String
    {
        let kinds: [APIKeyKind]
        if kind == "all" {
            kinds = APIKeyKind.allCases
        } else if let one = APIKeyKind(rawValue: kind.uppercased()) {
            kinds = [one]
        } else {
            throw UsageError("unknown key kind '\(kind)'; one of \(APIKeyKind.allCases.map(\.rawValue)) or all")
        }
        var keys: [APIKeyKind: String] = [:]
        for kind in kinds { keys[kind] = try await apps.rotateKey(app: app, kind: kind, logger: logger) }
        return shellLines(appName: nil, appID: try await apps.appID(app, logger: logger), keys: keys)
    }

    /// `BAAS_APP_ID=…` and one `BAAS_<KIND>_KEY=…` line per key, in a stable order.
    static func shellLines(appName: String?, appID: String, keys: [APIKeyKind: String]) -> String {
        var lines = appName.map { ["BAAS_APP_NAME='\($0.replacingOccurrences(of: "'", with: "'\\''"))'"] } ?? []
        lines.append("BAAS_APP_ID=\(appID)")
        for kind in APIKeyKind.allCases {
            guard let key = keys[kind] else { continue }
            lines.append("BAAS_\(kind == .serverCode ? "SERVER" : kind.rawValue)_KEY=\(key)")
        }
        return lines.joined(separator: "\n")
    }
}

/// Runs an admin command's `body` on a pool over `database` once users-service's migrations
/// are applied, so the commands work on a fresh database.
func withMigratedDatabase<Result: Sendable>(
    _ database: DatabaseConfiguration, logger: Logger, _ body: @Sendable (PostgresClient) async throws -> Result
) async throws -> Result {
    try await PostgresClient.with(database, logger: logger) { client in
        try await MigrationRunner(owner: UsersService.name.rawValue, migrations: UsersService.migrations)
            .apply(on: client, logger: logger)
        return try await body(client)
    }
}
