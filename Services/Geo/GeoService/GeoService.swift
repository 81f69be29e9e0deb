import DataEngine
import InternalProtocol
import PostgresSupport
import ServiceRuntime

/// geo-service: points on PostGIS with categories and metadata, searches by radius, rectangle,
/// category, metadata and where clause, grid clusters and relative finds (contract §5).
public enum GeoService: BackendService {
    public static let name = ServiceName.geo

    public static let migrations: [any DatabaseMigration] = GeoMigrations.all

    public static func register(
        operations: inout OperationRegistry, routes: inout PublicRoutes, environment: ServiceEnvironment
    ) throws {
        let engine = DataEngine(database: environment.database, logger: environment.logger)
        environment.background.add(engine.listener)
        GeoRoutes(store: GeoStore(database: environment.database, logger: environment.logger), objects: GeoDataObjects(engine: engine))
            .add(to: &routes)
    }
}
