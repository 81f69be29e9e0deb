import DataEngine
import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport
import ServiceRuntime

/// `users-service roles …`: the administrator's commands for an app's custom roles (the same
/// rules as the server-code-key API). They apply users-service's migrations first.
/// - `roles list APP`: one role per line.
/// - `roles create APP NAME` / `roles delete APP NAME` (APP is the app's id or name).
package enum RolesCommand {
    static let usage = "usage: users-service roles (list APP | create APP NAME | delete APP NAME)"

    /// Runs the command and returns what to print.
    package static func run(_ arguments: [String], database: DatabaseConfiguration, logger: Logger) async throws
        -> String
    {
        try await withMigratedDatabase(database, logger: logger) { client in
            guard arguments.count >= 2 else { throw UsageError(usage) }
            let appID = try await AppRepository(database: client).appID(arguments[1], logger: logger)
            let session = DatabaseSession(pool: client, logger: logger)
            switch (arguments[0], arguments.count) {
            case ("list", 2):
                return try await Roles.list(appID: appID, session: session).joined(separator: "\n")
            case ("create", 3):
                let created = try await Roles.create(
                    appID: appID, name: try Roles.validNewName(arguments[2]), session: session)
                return created ? "created \(arguments[2])" : "\(arguments[2]) exists"
            case ("delete", 3):
                try await Roles.deleteAnnouncing(appID: appID, name: arguments[2], session: session)
                return "deleted \(arguments[2])"
            default:
                throw UsageError(usage)
            }
        }
    }
}
