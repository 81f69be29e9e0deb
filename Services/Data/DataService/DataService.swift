import DataEngine
import InternalProtocol
import Permissions
import PostgresSupport
import ServiceRuntime

/// data-service: app tables with dynamic schema, queries, bulk operations and units of work
/// over the shared ``DataEngine``.
package enum DataService: BackendService {
    package static let name = ServiceName.data

    package static let migrations: [any DatabaseMigration] = CatalogMigrations.all

    package static func register(
        operations: inout OperationRegistry, routes: inout PublicRoutes, environment: ServiceEnvironment
    ) throws {
        let engine = DataEngine(
            database: environment.database, logger: environment.logger, prepared: environment.preparedStatements)
        environment.background.add(engine.listener)
        operations.register(PermissionRulesLookup.self) { request, _ in
            let catalog = try await engine.cache.catalog(for: request.appId)
            return .init(version: catalog.version, rules: catalog.permissions)
        }
        // A table or column made through another service a moment ago may not have reached this
        // process's catalog cache: such a miss is checked against the committed schema.
        routes.around = { call, handler in
            try await engine.retryingOnStaleSchema(app: call.identity.appId, logger: call.context.logger) {
                try await handler(call)
            }
        }
        routes.pathParameters = DocumentExamples.dataPathParameters
        routes.removalPathParameters = DocumentExamples.dataRemovalPathParameters
        DataRoutes(engine: engine, peers: environment.peers).add(to: &routes)
    }
}
