import AsyncHTTPClient
import Configuration
import Foundation
import InternalProtocol
import NIOCore
import NIOFoundationCompat
import PostgresSupport
import ServiceLifecycle
import ServiceRuntime
import Synchronization
import Testing

/// Checks every backend service must pass, run by each service's own test target: it starts,
/// migrates, reports readiness from its database on both the operations port and the internal
/// protocol, and answers unknown public paths with an envelope naming itself.
package enum BackendChecks {
    /// A running backend.
    package struct Running: Sendable {
        /// `http://127.0.0.1:<ops port>`.
        package let operationsURL: String
        /// A client presenting the gateway's certificate, pointed at the backend.
        package let client: InternalClient
        /// The service.
        package let service: ServiceName
    }

    /// Starts `backend` against `database` on free ports, runs `body`, stops it.
    package static func with<Backend: BackendService>(
        _ backend: Backend.Type, database: DatabaseConfiguration, migrate: Bool = true,
        _ body: @Sendable (Running) async throws -> Void
    ) async throws {
        let rpcPort = try await FreePort.next()
        var environment = [
            "BAAS_RPC_PORT": "\(rpcPort)", "BAAS_OPS_PORT": "0", "BAAS_POSTGRES_HOST": database.host,
            "BAAS_POSTGRES_PORT": "\(database.port)", "BAAS_POSTGRES_USER": database.username,
            "BAAS_POSTGRES_DATABASE": database.database, "BAAS_MIGRATE_ON_START": "\(migrate)",
        ]
        environment["BAAS_POSTGRES_PASSWORD"] = database.password
        environment.merge(TestPKI.timeoutEnvironment) { $1 }
        let configuration = RuntimeConfiguration(service: Backend.name, reader: .fromEnvironment(environment))
        let parts = try Backend.parts(
            configuration: configuration, tls: TestPKI.material(for: Backend.name), logger: TestDatabase.logger)
        let group = ServiceGroup(configuration: .init(services: parts.services, logger: TestDatabase.logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let client = try InternalClient(
                tls: TestPKI.material(for: .gateway), peers: [Backend.name: "https://127.0.0.1:\(rpcPort)"],
                connectTimeout: TestPKI.connectTimeout)
            var failure: (any Error)?
            do {
                try await client.using { client in
                    // A bound on a hang, not on speed: every suite starts its services at once.
                    _ = try await withTimeout(.seconds(120)) { await parts.ports.port(.rpc) }
                    let running = Running(
                        operationsURL: "http://127.0.0.1:\(await parts.ports.port(.operations))", client: client,
                        service: Backend.name)
                    try await body(running)
                }
            } catch { failure = error }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            if let failure { throw failure }
        }
    }

    static func context() -> CallContext {
        // Longer than a readiness check may wait, with slack for a loaded machine.
        CallContext(
            deadline: .now() + .seconds(TestPKI.readinessTimeout.components.seconds + 25), logger: TestDatabase.logger)
    }

    /// With its database up: live, ready on both ports, metrics exposed.
    package static func readyWithDatabase<Backend: BackendService>(_ backend: Backend.Type) async throws {
        try await TestDatabase.with { database async throws in
            try await with(backend, database: database) { running async throws in
                let health = try await HTTPTestClient.send(.GET, "\(running.operationsURL)/health")
                #expect(health.status == 200)
                #expect(health.json["status"] as? String == "live")
                let ready = try await HTTPTestClient.send(.GET, "\(running.operationsURL)/ready")
                #expect(ready.status == 200)
                let status = try await running.client.call(
                    SystemStatus.self, Empty(), on: running.service, context: context())
                #expect(status == .init(service: running.service, ready: true))
                let metrics = try await HTTPTestClient.send(.GET, "\(running.operationsURL)/metrics")
                #expect(metrics.status == 200)
                #expect(metrics.text.contains("# TYPE"))
            }
        }
    }

    /// With its database unreachable: still live, but not ready — answered promptly.
    package static func notReadyWithoutDatabase<Backend: BackendService>(_ backend: Backend.Type) async throws {
        let closed = TestDatabase.server.with(database: "baas_template")
        var unreachable = closed
        unreachable.port = try await FreePort.next()
        try await with(backend, database: unreachable, migrate: false) { running async throws in
            // Each answer comes within the readiness timeout, plus slack for a busy machine.
            let bound = TestPKI.readinessTimeout + .seconds(15)
            var started = ContinuousClock.now
            let ready = try await HTTPTestClient.send(.GET, "\(running.operationsURL)/ready")
            #expect(ready.status == 503)
            #expect(ready.json["detail"] as? String == "database unreachable")
            #expect(ContinuousClock.now - started < bound)
            started = ContinuousClock.now
            let status = try await running.client.call(
                SystemStatus.self, Empty(), on: running.service, context: context())
            #expect(status.ready == false)
            #expect(ContinuousClock.now - started < bound)
            let health = try await HTTPTestClient.send(.GET, "\(running.operationsURL)/health")
            #expect(health.status == 200)
        }
    }

    /// `backend`'s manifest as it answers it on `system.routes`.
    package static func manifest<Backend: BackendService>(of backend: Backend.Type, database: DatabaseConfiguration)
        async throws -> RouteManifest
    {
        let manifest = Mutex<RouteManifest?>(nil)
        try await with(backend, database: database) { running async throws in
            let answer = try await running.client.call(
                SystemRoutes.self, Empty(), on: running.service, context: context())
            manifest.withLock { $0 = answer }
        }
        return try #require(manifest.withLock { $0 })
    }

    /// Its manifest on `system.routes` for the gateway only; every public route refused to any
    /// other caller before a handler runs; unknown paths a JSON 404.
    package static func servesItsManifestToTheGatewayOnly<Backend: BackendService>(_ backend: Backend.Type)
        async throws
    {
        try await TestDatabase.with { database async throws in
            try await with(backend, database: database) { running async throws in
                let manifest = try await running.client.call(
                    SystemRoutes.self, Empty(), on: running.service, context: context())
                #expect(manifest.service == running.service)
                let other: ServiceName = running.service == .users ? .data : .users
                let stranger = try InternalClient(
                    tls: TestPKI.material(for: other),
                    peers: [running.service: running.client.baseURL(of: running.service)!],
                    connectTimeout: TestPKI.connectTimeout)
                try await stranger.using { stranger in
                    await #expect(throws: ErrorEnvelope.callerRefused) {
                        try await stranger.call(SystemRoutes.self, Empty(), on: running.service, context: context())
                    }
                    for route in manifest.routes {
                        let path = route.path.split(separator: "/").map {
                            $0.hasPrefix(":") || $0.hasPrefix("*") ? "x" : $0
                        }
                        let answer = try await raw(
                            stranger, route.method, path.joined(separator: "/"), running: running)
                        #expect(answer.status == 403, "\(route.method) \(route.path)")
                        #expect(answer.envelope == .callerRefused, "\(route.method) \(route.path)")
                    }
                }
                let unknown = try await raw(running.client, "GET", "nowhere/x?y=1", running: running)
                #expect(unknown.status == 404)
                #expect(unknown.envelope?.code == 404)
            }
        }
    }

    /// A request sent as it is, with an identity header, answered with status and envelope.
    static func raw(_ client: InternalClient, _ method: String, _ path: String, running: Running) async throws
        -> (status: Int, envelope: ErrorEnvelope?)
    {
        var request = HTTPClientRequest(url: "\(running.client.baseURL(of: running.service)!)/\(path)")
        request.method = .init(rawValue: method)
        let identity = Identity.anonymous(appId: UUID().uuidString, keyKind: .rest)
        request.headers.add(name: InternalHeader.identity, value: try identity.headerValue())
        let response = try await client.http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), try? JSONDecoder().decode(ErrorEnvelope.self, from: Data(buffer: body)))
    }
}
