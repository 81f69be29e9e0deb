import DataService
import FilesService
import GeoService
import MessagingService
import PostgresNIO
import PostgresSupport
import RelationsService
import ServiceRuntime
import UsersService

/// The template database with every service's migrations applied, made once per test process
/// from `baas_template`: a cluster's services then find their migrations done instead of each
/// cluster replaying them all. It is made anew by each test process, so it always holds the
/// migrations of the code under test.
actor MigratedTemplate {
    static let shared = MigratedTemplate()

    /// Every backend whose migrations a started cluster applies.
    private static let backends: [any BackendService.Type] = [
        UsersService.self, DataService.self, RelationsService.self, MessagingService.self,
        FilesService.self, GeoService.self,
    ]

    private let templateName = "baas_migrated_template"
    private var made: Task<Void, any Error>?

    /// The template's name, once it is made (the first caller makes it; a failure is every caller's).
    func name() async throws -> String {
        let making = made ?? Task { try await Self.make(templateName) }
        made = making
        try await making.value
        return templateName
    }

    private static func make(_ name: String) async throws {
        try await TestDatabase.admin("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        try await TestDatabase.admin("CREATE DATABASE \(name) TEMPLATE baas_template STRATEGY FILE_COPY")
        try await PostgresClient.with(TestDatabase.server.with(database: name), logger: TestDatabase.logger) { client in
            for backend in backends {
                for runner in backend.migrationRunners {
                    _ = try await runner.apply(on: client, logger: TestDatabase.logger)
                }
            }
        }
    }
}
