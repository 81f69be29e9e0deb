import Hummingbird
import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport
import ServiceLifecycle
import Synchronization

/// What a backend service library provides to the shared launcher.
package protocol BackendService: SendableMetatype {
    /// Which service this is.
    static var name: ServiceName { get }
    /// The service's migrations, applied in version order before it serves.
    static var migrations: [any DatabaseMigration] { get }
    /// Other owners' migrations the service's code relies on (a shared engine's tables),
    /// applied first; runners of one owner never apply a version twice.
    static var sharedMigrations: [(owner: ServiceName, migrations: [any DatabaseMigration])] { get }
    /// Adds the service's internal operations and declares its public routes.
    static func register(
        operations: inout OperationRegistry, routes: inout PublicRoutes, environment: ServiceEnvironment) throws
}

/// The dependencies handed to a backend when it builds its handlers.
package struct ServiceEnvironment: Sendable {
    /// The process configuration.
    package let configuration: RuntimeConfiguration
    /// The database pool.
    package let database: PostgresClient
    /// The statements prepared on the pool's connections, shared by everything using the pool.
    package let preparedStatements: PreparedStatements
    /// The client for calling other services.
    package let peers: InternalClient
    /// The service's logger.
    package let logger: Logger
    /// Long-running parts the service adds while registering (listeners, schedulers); they
    /// run in the process's service group after the database pool, once its migrations have run.
    package let background = BackgroundServices()
}

/// Collects a service's long-running parts during registration.
package final class BackgroundServices: Sendable {
    private let services = Mutex<[any Service]>([])

    /// Adds a part that runs for the life of the process.
    package func add(_ service: any Service) {
        services.withLock { $0.append(service) }
    }

    /// The parts added so far.
    package var all: [any Service] { services.withLock { $0 } }
}

/// Everything one process runs, in shutdown order reversed (first listed stops last).
package struct ServiceParts: Sendable {
    /// The long-lived parts for one `ServiceGroup`.
    package let services: [any Service]
    /// The ports the servers bind.
    package let ports: BoundPorts

    /// Creates parts.
    package init(services: [any Service], ports: BoundPorts) {
        self.services = services
        self.ports = ports
    }
}

extension BackendService {
    /// None by default.
    package static var sharedMigrations: [(owner: ServiceName, migrations: [any DatabaseMigration])] { [] }

    /// Every migration runner the service applies, shared ones first.
    package static var migrationRunners: [MigrationRunner] {
        sharedMigrations.map { MigrationRunner(owner: $0.owner.rawValue, migrations: $0.migrations) }
            + [MigrationRunner(owner: name.rawValue, migrations: migrations)]
    }

    /// Assembles the service: database pool, internal client, internal server (migrating
    /// before it binds when configured) and operations server.
    package static func parts(configuration: RuntimeConfiguration, tls: TLSMaterial, logger: Logger) throws
        -> ServiceParts
    {
        let ports = BoundPorts()
        let database = PostgresClient(configuration.database, logger: logger)
        let peers = try InternalClient(tls: tls, configuration: configuration)
        let environment = ServiceEnvironment(
            configuration: configuration, database: database,
            preparedStatements: PreparedStatements(
                perConnection: configuration.database.preparedStatementsPerConnection),
            peers: peers, logger: logger)
        let readiness = DatabaseReadiness(
            service: name, database: database,
            timeout: .milliseconds(configuration.readinessTimeoutMilliseconds), logger: logger)
        let health = DatabaseHealth(configuration: configuration.database, logger: logger)
        var operations = OperationRegistry()
        var routes = PublicRoutes(service: name)
        try register(operations: &operations, routes: &routes, environment: environment)
        operations.register(SystemStatus.self) { _, _ in await readiness.check() }
        operations.register(SystemRoutes.self) { [manifest = routes.manifest] _, _ in manifest }
        var rpc = try RPCServer.make(
            service: name, host: configuration.bindHost, port: configuration.rpcPort, tls: tls,
            registry: operations, routes: routes, ports: ports,
            defaultTimeout: .milliseconds(Int64(configuration.internalTimeoutMilliseconds)),
            filesPublicURL: configuration.filesPublicURL, health: health, logger: logger)
        let migrated = MigrationGate()
        if configuration.migrateOnStart {
            let runners = migrationRunners
            rpc.beforeServerStarts {
                await PostgresClient.settle()
                for runner in runners { _ = try await runner.apply(on: database, logger: logger) }
                migrated.open()
            }
        } else {
            migrated.open()
        }
        let operationsServer = OperationsServer.make(
            service: name, host: configuration.bindHost, port: configuration.opsPort, ports: ports, logger: logger,
            readiness: readiness.check)
        return ServiceParts(
            services: [database, health, peers]
                + environment.background.all.map { GatedService(gate: migrated, service: $0) }
                + [rpc, operationsServer], ports: ports)
    }
}

/// A backend is ready when its database answers within `timeout`.
struct DatabaseReadiness: Sendable {
    let service: ServiceName
    let database: PostgresClient
    /// How long a check waits for the database.
    let timeout: Duration
    let logger: Logger

    @Sendable func check() async -> SystemStatus.Response {
        do {
            try await withTimeout(timeout) { [database, logger] in
                try await database.run("SELECT 1", logger: logger)
            }
            return .init(service: service, ready: true)
        } catch {
            return .init(service: service, ready: false, detail: "database unreachable")
        }
    }
}
