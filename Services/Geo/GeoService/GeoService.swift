import InternalProtocol
import PostgresSupport
import ServiceRuntime

/// geo-service: answers readiness and forwarded public requests; its endpoints arrive
/// with the issue that builds them.
public enum GeoService: BackendService {
    public static let name = ServiceName.geo

    public static let migrations: [any DatabaseMigration] = []

    public static func register(
        operations: inout OperationRegistry, routes: inout PublicRoutes, environment: ServiceEnvironment
    ) throws {}
}
