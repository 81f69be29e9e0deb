import Configuration
import DataService
import FilesService
import Foundation
import GatewayService
import GeoService
import InternalProtocol
import Logging
import MessagingService
import NIOHTTP1
import PostgresNIO
import PostgresSupport
import RelationsService
import ServiceLifecycle
import ServiceRuntime
import Testing
import UsersService

/// All seven services started in this test process on free ports, over one fresh database,
/// with one app created; torn down when the body returns.
package struct TestCluster: Sendable {
    /// The gateway's public base URL, e.g. `http://127.0.0.1:53211`.
    package let gatewayURL: String
    /// The app created for the test, with its keys.
    package let app: AppRepository.CreatedApp
    /// The cluster's database.
    package let database: DatabaseConfiguration
    /// Each service's bound ports.
    package let ports: [ServiceName: BoundPorts]
    private let groups: [ServiceName: ServiceGroup]
    private let exits: Exits

    /// Which services' groups have finished running, for ``stop(_:)`` to wait on.
    actor Exits {
        private var finished: Set<ServiceName> = []

        func finish(_ service: ServiceName) {
            finished.insert(service)
        }

        /// Waits until `service`'s group has finished, at most `limit`: whether it has.
        /// Cancellation ends the wait at once.
        func wait(for service: ServiceName, within limit: Duration) async -> Bool {
            let deadline = ContinuousClock.now + limit
            while !finished.contains(service) {
                guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return true
        }
    }

    /// The gateway's public port.
    package var port: Int { Int(gatewayURL.split(separator: ":").last!)! }

    /// `/{appId}/{key}` for a key kind, the prefix of public paths.
    package func prefix(_ kind: APIKeyKind = .rest) -> String {
        "/\(app.id)/\(app.keys[kind]!)"
    }

    /// Sends a public request through the gateway with the app's `key`, an optional JSON body
    /// and an optional `user-token`.
    package func send(
        _ method: HTTPMethod, _ path: String, _ body: String? = nil, token: String? = nil, key: APIKeyKind = .rest
    ) async throws -> HTTPResult {
        var headers: [(String, String)] = body == nil ? [] : [("Content-Type", "application/json")]
        if let token { headers.append(("user-token", token)) }
        return try await HTTPTestClient.send(
            method, gatewayURL + prefix(key) + path, headers: headers, body: body.map { Data($0.utf8) })
    }

    /// Registers and logs in a user with password `pw`: their id and token.
    package func account(_ email: String) async throws -> (id: String, token: String) {
        _ = try await send(.POST, "/users/register", #"{"email": "\#(email)", "password": "pw"}"#)
        let login = try await send(.POST, "/users/login", #"{"login": "\#(email)", "password": "pw"}"#)
        guard let id = login.json["objectId"] as? String, let token = login.json["user-token"] as? String else {
            throw TestClusterFailure(description: "login of \(email): \(login.status) \(login.text)")
        }
        return (id, token)
    }

    /// The same cluster serving `app` (the shared cluster gives each test an app of its own).
    func serving(_ app: AppRepository.CreatedApp) -> TestCluster {
        TestCluster(gatewayURL: gatewayURL, app: app, database: database, ports: ports, groups: groups, exits: exits)
    }

    /// Stops one service gracefully, as `docker stop` would, and returns once it has exited
    /// (recording an issue when it has not within 90 seconds; cancellation ends the wait).
    package func stop(_ service: ServiceName) async {
        await groups[service]?.triggerGracefulShutdown()
        let limit = Duration.seconds(90)
        if await !exits.wait(for: service, within: limit), !Task.isCancelled {
            Issue.record("\(service.executable) did not stop within \(limit) of its graceful shutdown")
        }
    }

    /// Starts the cluster (once one of the ``ClusterSlots`` is free), runs `body`, stops everything.
    /// - Parameters:
    ///   - environment: extra configuration keys (`BAAS_GATEWAY_…`) for every process.
    ///   - replacing: backends to run in place of a service (a test library with its own
    ///     routes), under that service's name, certificate and port.
    ///   - timeLimit: the test's own time limit, for start, body and stop together: counted from
    ///     when the slot is taken (queueing does not count), then everything is cancelled and
    ///     ``TimeLimitExceeded`` thrown. Suites' `.timeLimit` traits are only a backstop above it.
    ///   - mostlyWaiting: the test mostly waits out a deadline or an idle limit: it takes a slot
    ///     before the others (``ClusterSlots/withSlot(timeLimit:mostlyWaiting:_:)``).
    package static func with<Result: Sendable>(
        environment extra: [String: String] = [:], replacing: [ServiceName: any BackendService.Type] = [:],
        timeLimit: Duration = .seconds(300), mostlyWaiting: Bool = false,
        _ body: @Sendable (TestCluster) async throws -> Result
    ) async throws -> Result {
        try await ClusterSlots.withSlot(timeLimit: timeLimit, mostlyWaiting: mostlyWaiting) {
            try await start(environment: extra, replacing: replacing, body)
        }
    }

    static func start<Result: Sendable>(
        environment extra: [String: String], replacing: [ServiceName: any BackendService.Type],
        _ body: @Sendable (TestCluster) async throws -> Result
    ) async throws -> Result {
        try await TestDatabase.with(migrated: true) { database in
            let environment = try await environment(database: database).merging(extra) { $1 }
            var groups: [ServiceName: ServiceGroup] = [:]
            var ports: [ServiceName: BoundPorts] = [:]
            for service in ServiceName.allCases {
                let parts = try makeParts(service, environment: environment, replacement: replacing[service])
                groups[service] = ServiceGroup(
                    configuration: .init(services: parts.services, logger: TestDatabase.logger))
                ports[service] = parts.ports
            }
            return try await run(groups: groups, ports: ports, database: database, body)
        }
    }

    private static func run<Result: Sendable>(
        groups: [ServiceName: ServiceGroup], ports: [ServiceName: BoundPorts], database: DatabaseConfiguration,
        _ body: @Sendable (TestCluster) async throws -> Result
    ) async throws -> Result {
        let exits = Exits()
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            for (service, group) in groups {
                tasks.addTask {
                    do {
                        try await group.run()
                    } catch {
                        await exits.finish(service)
                        throw error
                    }
                    await exits.finish(service)
                }
            }
            func stopAll() async {
                for group in groups.values { await group.triggerGracefulShutdown() }
            }
            do {
                let gatewayPort = try await withTimeout(.seconds(60)) { await ports[.gateway]!.port(.publicAPI) }
                for service in ServiceName.backends {
                    _ = try await withTimeout(.seconds(60)) { await ports[service]!.port(.rpc) }
                }
                try await waitUntilReady(operationsPort: await ports[.gateway]!.port(.operations))
                let app = try await PostgresClient.with(database, logger: TestDatabase.logger) { client in
                    try await AppRepository(database: client).create(name: "test app", logger: TestDatabase.logger)
                }
                let cluster = TestCluster(
                    gatewayURL: "http://127.0.0.1:\(gatewayPort)", app: app, database: database, ports: ports,
                    groups: groups, exits: exits)
                let result = try await body(cluster)
                await stopAll()
                try await tasks.waitForAll()
                return result
            } catch {
                await stopAll()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }

    /// Waits until the gateway reports ready: it has every service's routes and users-service answers.
    private static func waitUntilReady(operationsPort: Int) async throws {
        try await withTimeout(.seconds(60)) {
            while try await HTTPTestClient.send(.GET, "http://127.0.0.1:\(operationsPort)/ready").status != 200 {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    private static func environment(database: DatabaseConfiguration) async throws -> [String: String] {
        var environment = [
            // Readiness calls share the CPU with every other suite; a live service must never
            // be reported down for being slow.
            "BAAS_GATEWAY_INFO_DEADLINE_MS": "20000",
            "BAAS_OPS_PORT": "0", "BAAS_GATEWAY_PORT": "0", "BAAS_GATEWAY_HOST": "127.0.0.1",
            "BAAS_POSTGRES_HOST": database.host, "BAAS_POSTGRES_PORT": "\(database.port)",
            "BAAS_POSTGRES_USER": database.username, "BAAS_POSTGRES_DATABASE": database.database,
            "BAAS_POSTGRES_MAX_CONNECTIONS": "4", "BAAS_USERS_BCRYPT_COST": "4",
        ]
        environment["BAAS_POSTGRES_PASSWORD"] = database.password
        environment.merge(TestPKI.timeoutEnvironment) { $1 }
        for service in ServiceName.backends {
            environment["BAAS_PEER_\(service.rawValue.uppercased())_URL"] =
                "https://127.0.0.1:\(try await FreePort.next())"
        }
        return environment
    }

    private static func makeParts(
        _ service: ServiceName, environment: [String: String], replacement: (any BackendService.Type)?
    ) throws -> ServiceParts {
        var environment = environment
        if service != .gateway {
            let url = environment["BAAS_PEER_\(service.rawValue.uppercased())_URL"]!
            environment["BAAS_RPC_PORT"] = String(url.split(separator: ":").last!)
        }
        let reader = ConfigReader.fromEnvironment(environment)
        let runtime = RuntimeConfiguration(service: service, reader: reader)
        let tls = TestPKI.material(for: service)
        var logger = TestDatabase.logger
        logger[metadataKey: "service"] = .string(service.executable)
        if let replacement { return try replacement.parts(configuration: runtime, tls: tls, logger: logger) }
        switch service {
        case .gateway:
            return try GatewayService.parts(
                runtime: runtime, configuration: GatewayConfiguration(reader: reader), tls: tls, logger: logger)
        case .users: return try UsersService.parts(configuration: runtime, tls: tls, logger: logger)
        case .data: return try DataService.parts(configuration: runtime, tls: tls, logger: logger)
        case .relations: return try RelationsService.parts(configuration: runtime, tls: tls, logger: logger)
        case .messaging: return try MessagingService.parts(configuration: runtime, tls: tls, logger: logger)
        case .files: return try FilesService.parts(configuration: runtime, tls: tls, logger: logger)
        case .geo: return try GeoService.parts(configuration: runtime, tls: tls, logger: logger)
        }
    }
}

/// A cluster request that did not answer as a helper needs.
package struct TestClusterFailure: Error, CustomStringConvertible {
    package let description: String

    /// A failure saying `description`.
    package init(description: String) { self.description = description }
}

extension TestCluster {
    /// Every backend's manifest as it answers `system.routes` to the gateway.
    package func manifests() async throws -> [RouteManifest] {
        var peers: [ServiceName: String] = [:]
        for service in ServiceName.backends { peers[service] = "https://127.0.0.1:\(await ports[service]!.port(.rpc))" }
        let client = try InternalClient(
            tls: TestPKI.material(for: .gateway), peers: peers, connectTimeout: TestPKI.connectTimeout)
        return try await client.using { client in
            var manifests: [RouteManifest] = []
            for service in ServiceName.backends {
                let context = CallContext(
                    deadline: .now() + .seconds(TestPKI.internalTimeout.components.seconds), logger: TestDatabase.logger
                )
                manifests.append(try await client.call(SystemRoutes.self, Empty(), on: service, context: context))
            }
            return manifests
        }
    }
}
