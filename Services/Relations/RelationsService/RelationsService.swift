import InternalProtocol
import PostgresSupport
import ServiceRuntime

/// relations-service: answers readiness and forwarded public requests; its endpoints arrive
/// with the issue that builds them.
public enum RelationsService: BackendService {
    public static let name = ServiceName.relations

    public static let migrations: [any DatabaseMigration] = []

    public static func register(
        operations: inout OperationRegistry, routes: inout PublicRoutes, environment: ServiceEnvironment
    ) throws {}
}
