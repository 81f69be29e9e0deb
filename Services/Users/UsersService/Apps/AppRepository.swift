import Foundation
import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport

/// Apps and API keys in the `platform` schema.
package struct AppRepository: Sendable {
    /// A newly created app with its keys in clear text (shown once, stored hashed).
    package struct CreatedApp: Sendable {
        /// The app id.
        package let id: String
        /// The app name.
        package let name: String
        /// One key per client kind.
        package let keys: [APIKeyKind: String]
    }

    /// An app in a listing.
    package struct Summary: Sendable {
        /// The app id.
        package let id: String
        /// The app name.
        package let name: String
        /// When it was created.
        package let created: Date
    }

    let database: PostgresClient

    /// Creates a repository over `database`.
    package init(database: PostgresClient) {
        self.database = database
    }

    /// Resolves an app id and key, or throws 2002.
    package func resolve(appId: String, apiKey: String, logger: Logger) async throws -> ResolveAPIKey.Response {
        guard let id = UUID(uuidString: appId) else { throw ErrorEnvelope.invalidApplicationInfo }
        let rows = try await database.query(
            """
            SELECT a.name, k.kind FROM platform.api_keys k JOIN platform.apps a ON a.id = k.app_id
            WHERE k.app_id = \(id) AND k.key_hash = \(APIKey.hash(apiKey))
            """, logger: logger)
        for try await (name, kind) in rows.decode((String, String).self) {
            guard let keyKind = APIKeyKind(rawValue: kind) else { break }
            return .init(appId: id.uuidString, appName: name, keyKind: keyKind)
        }
        throw ErrorEnvelope.invalidApplicationInfo
    }

    /// An app by id, or 2002 when there is none.
    package func app(id appId: String, logger: Logger) async throws -> GetApp.Response {
        guard let id = UUID(uuidString: appId) else { throw ErrorEnvelope.invalidApplicationInfo }
        let rows = try await database.query("SELECT name FROM platform.apps WHERE id = \(id)", logger: logger)
        for try await name in rows.decode(String.self) { return .init(appId: id.uuidString, name: name) }
        throw ErrorEnvelope.invalidApplicationInfo
    }

    /// Creates an app with a fresh key of every kind, atomically.
    package func create(name: String, logger: Logger) async throws -> CreatedApp {
        let id = UUID(uuidString: APIKey.generate())!
        let keys = Dictionary(uniqueKeysWithValues: APIKeyKind.allCases.map { ($0, APIKey.generate()) })
        do {
            try await database.withTransaction(logger: logger) { connection in
                try await connection.run(
                    "INSERT INTO platform.apps (id, name) VALUES (\(id), \(name))", logger: logger)
                for (kind, key) in keys {
                    try await connection.run(
                        "INSERT INTO platform.api_keys (app_id, kind, key_hash) VALUES (\(id), \(kind.rawValue), \(APIKey.hash(key)))",
                        logger: logger)
                }
            }
        } catch let error as PostgresTransactionError {
            if let psql = error.closureError as? PSQLError, psql.isUniqueViolation {
                throw AppAdminError.nameTaken(name)
            }
            throw error
        }
        return CreatedApp(id: id.uuidString, name: name, keys: keys)
    }

    /// Every app, oldest first.
    package func list(logger: Logger) async throws -> [Summary] {
        let rows = try await database.query(
            "SELECT id, name, created_at FROM platform.apps ORDER BY created_at, name", logger: logger)
        var apps: [Summary] = []
        for try await (id, name, created) in rows.decode((UUID, String, Date).self) {
            apps.append(Summary(id: id.uuidString, name: name, created: created))
        }
        return apps
    }

    /// Replaces the key of `kind` for the app with this id or name and returns the new key.
    package func rotateKey(app: String, kind: APIKeyKind, logger: Logger) async throws -> String {
        let key = APIKey.generate()
        let id = UUID(uuidString: app)
        let rows = try await database.query(
            """
            UPDATE platform.api_keys SET key_hash = \(APIKey.hash(key)), created_at = now()
            WHERE kind = \(kind.rawValue) AND app_id = (
                SELECT a.id FROM platform.apps a WHERE a.id = \(id) OR a.name = \(app))
            RETURNING kind
            """, logger: logger)
        for try await _ in rows.decode(String.self) { return key }
        throw AppAdminError.unknownApp(app)
    }

    /// The id of the app with this id or name.
    package func appID(_ app: String, logger: Logger) async throws -> String {
        let id = UUID(uuidString: app)
        let rows = try await database.query(
            "SELECT id FROM platform.apps WHERE id = \(id) OR name = \(app)", logger: logger)
        for try await found in rows.decode(UUID.self) { return found.uuidString }
        throw AppAdminError.unknownApp(app)
    }
}

/// Failures of the app administration commands.
package enum AppAdminError: Error, CustomStringConvertible, Equatable {
    /// An app with this name exists.
    case nameTaken(String)
    /// No app has this id or name.
    case unknownApp(String)

    package var description: String {
        switch self {
        case .nameTaken(let name): "an app named '\(name)' already exists"
        case .unknownApp(let app): "no app with id or name '\(app)'"
        }
    }
}
