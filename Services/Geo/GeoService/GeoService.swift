import DataEngine
import InternalProtocol
import PostgresSupport
import ServiceRuntime

/// geo-service: points on PostGIS with categories and metadata, searches by radius, rectangle,
/// category, metadata and where clause, grid clusters and relative finds (contract §5).
package enum GeoService: BackendService {
    package static let name = ServiceName.geo

    package static let migrations: [any DatabaseMigration] = GeoMigrations.all

    package static func register(
        operations: inout OperationRegistry, routes: inout PublicRoutes, environment: ServiceEnvironment
    ) throws {
        let store = GeoStore(database: environment.database, logger: environment.logger)
        let engine = DataEngine(
            database: environment.database, logger: environment.logger, prepared: environment.preparedStatements)
        let table = store.categoryRuleTable
        let rules = CategoryRulesCache(channel: table.channel) { app in
            CategoryRules(rules: try await table.rules(app: app))
        }
        environment.background.add(engine.listener)
        environment.background.add(
            NotificationListener(
                database: environment.database, channel: rules.channel, consumer: rules, logger: environment.logger))
        routes.pathParameters = [
            "name": APISchema.string.length(1).examples(.text(DocumentExamples.geoCategory)),
            "event": .choice(["onenter", "onstay", "onexit"]),
            "action": .permissionAction,
        ]
        routes.removalPathParameters = ["name": DocumentExamples.named(DocumentExamples.disposableName)]
        GeoRoutes(store: store, objects: GeoDataObjects(engine: engine), access: GeoAccess(rules: rules)).add(
            to: &routes)
    }
}
