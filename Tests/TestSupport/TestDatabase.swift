import Foundation
import Logging
import PostgresNIO
import PostgresSupport

/// Fresh databases for tests, cloned from the `baas_template` database that `Deploy/test.sh`
/// prepares (PostGIS installed) on the test cluster named by `BAAS_TEST_POSTGRES_*`.
package enum TestDatabase {
    /// The test cluster's server database.
    package static var server: DatabaseConfiguration {
        let environment = ProcessInfo.processInfo.environment
        return DatabaseConfiguration(
            host: environment["BAAS_TEST_POSTGRES_HOST"] ?? "127.0.0.1",
            port: Int(environment["BAAS_TEST_POSTGRES_PORT"] ?? "") ?? 5432,
            username: environment["BAAS_TEST_POSTGRES_USER"] ?? "baas",
            password: environment["BAAS_TEST_POSTGRES_PASSWORD"],
            database: "postgres", maximumConnections: 4)
    }

    /// A logger for tests: warnings and worse.
    package static var logger: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        return logger
    }

    /// Runs `body` with a new database and drops it afterwards: empty (PostGIS installed), or
    /// `migrated` with every service's migrations, as a cluster would find it once started.
    package static func with<Result: Sendable>(
        migrated: Bool = false, _ body: @Sendable (DatabaseConfiguration) async throws -> Result
    ) async throws -> Result {
        let name = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let template = migrated ? try await MigratedTemplate.shared.name() : "baas_template"
        // FILE_COPY copies the template's files after a checkpoint; the default writes every
        // page of it to the log, which each running change feed then has to read.
        try await admin("CREATE DATABASE \(name) TEMPLATE \(template) STRATEGY FILE_COPY")
        do {
            let result = try await body(server.with(database: name))
            try await admin("DROP DATABASE \(name) WITH (FORCE)")
            return result
        } catch {
            try? await admin("DROP DATABASE \(name) WITH (FORCE)")
            throw error
        }
    }

    static func admin(_ statement: String) async throws {
        do {
            try await PostgresClient.with(server, logger: logger) { client in
                try await client.run(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        } catch let error as PSQLError {
            // PSQLError hides the server's message from its description; a failing test needs it.
            throw AdminStatementFailed(statement: statement, detail: String(reflecting: error))
        }
    }
}

/// A set-up statement on the test cluster failed; the detail is PostgreSQL's own report.
struct AdminStatementFailed: Error, CustomStringConvertible {
    let statement: String
    let detail: String

    var description: String { "\(statement): \(detail)" }
}
