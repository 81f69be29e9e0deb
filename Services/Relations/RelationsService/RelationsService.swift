import DataEngine
import InternalProtocol
import Permissions
import PostgresSupport
import ServiceRuntime

/// relations-service: the relation API (`/data/{table}/{id}/{relation}`): setting, adding and
/// deleting links and loading children, over the shared ``DataEngine``. Relation columns live in
/// data-service's catalog; their link tables are created on demand under the same DDL lock.
package enum RelationsService: BackendService {
    package static let name = ServiceName.relations

    package static let migrations: [any DatabaseMigration] = []

    package static func register(
        operations: inout OperationRegistry, routes: inout PublicRoutes, environment: ServiceEnvironment
    ) throws {
        let engine = DataEngine(
            database: environment.database, logger: environment.logger, prepared: environment.preparedStatements)
        environment.background.add(engine.listener)
        // A table or column made through another service a moment ago may not have reached this
        // process's catalog cache: such a miss is checked against the committed schema.
        routes.around = { call, handler in
            try await engine.retryingOnStaleSchema(app: call.identity.appId, logger: call.context.logger) {
                try await handler(call)
            }
        }
        routes.pathParameters = DocumentExamples.dataPathParameters
        routes.removalPathParameters = DocumentExamples.dataRemovalPathParameters.merging([
            "id": APISchema.string.length(1).examples(.text(DocumentExamples.unlinkedObjectID))
        ]) { _, unlinked in unlinked }
        RelationRoutes(engine: engine).add(to: &routes)
    }
}
