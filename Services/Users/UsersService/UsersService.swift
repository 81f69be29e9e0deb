import InternalProtocol
import PostgresSupport
import ServiceRuntime

/// users-service: apps and API keys now; users' credentials, sessions and roles later.
public enum UsersService: BackendService {
    public static let name = ServiceName.users

    public static let migrations: [any DatabaseMigration] = [m0001CreateApps]

    public static func register(
        operations: inout OperationRegistry, endpoints: inout RESTRouter, environment: ServiceEnvironment
    ) throws {
        let apps = AppRepository(database: environment.database)
        operations.register(ResolveAPIKey.self) { request, context in
            try await apps.resolve(appId: request.appId, apiKey: request.apiKey, logger: context.logger)
        }
        operations.register(GetApp.self) { request, context in
            try await apps.app(id: request.appId, logger: context.logger)
        }
    }
}
