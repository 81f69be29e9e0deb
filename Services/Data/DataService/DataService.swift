import InternalProtocol
import PostgresSupport
import ServiceRuntime

/// data-service: answers readiness and forwarded public requests; its endpoints arrive
/// with the issue that builds them.
public enum DataService: BackendService {
    public static let name = ServiceName.data

    public static let migrations: [any DatabaseMigration] = []

    public static func register(
        operations: inout OperationRegistry, endpoints: inout RESTRouter, environment: ServiceEnvironment
    ) throws {}
}
