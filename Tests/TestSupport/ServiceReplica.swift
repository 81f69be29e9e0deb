import Foundation
import InternalProtocol
import ServiceRuntime

/// A second gateway and a second messaging-service, run as processes beside a ``TestCluster``
/// on its database: the gateway reaches this messaging-service and the cluster's other
/// services, so real-time clients of either gateway share one database and every other
/// service. The messaging-service can be stopped (SIGTERM) and started again on the same port
/// while the gateway stays up.
package actor ServiceReplica {
    /// The second gateway's public base URL.
    package nonisolated let gatewayURL: String
    private let folder: URL
    private let cluster: TestCluster
    private let messagingEnvironment: [String: String]
    private var messaging: ServiceProcess
    private let gateway: ServiceProcess

    private init(
        gatewayURL: String, folder: URL, cluster: TestCluster, messagingEnvironment: [String: String],
        messaging: ServiceProcess,
        gateway: ServiceProcess
    ) {
        self.gatewayURL = gatewayURL
        self.folder = folder
        self.cluster = cluster
        self.messagingEnvironment = messagingEnvironment
        self.messaging = messaging
        self.gateway = gateway
    }

    /// Starts the pair beside `cluster` (with `environment` added to both), runs `body`, stops both.
    package static func with<Result: Sendable>(
        cluster: TestCluster, environment: [String: String] = [:], _ body: (ServiceReplica) async throws -> Result
    ) async throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("replica-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try TestPKI.write(to: folder.appendingPathComponent("pki").path)
        var peers: [String: String] = [:]
        for service in ServiceName.backends {
            peers["BAAS_PEER_\(service.rawValue.uppercased())_URL"] =
                "https://127.0.0.1:\(await cluster.ports[service]!.port(.rpc))"
        }
        let messagingPort = try await FreePort.next()
        let shared = TestPKI.timeoutEnvironment.merging(environment) { $1 }
        let messagingEnvironment = peers.merging(shared) { $1 }.merging(["BAAS_RPC_PORT": "\(messagingPort)"]) { $1 }
        let messaging = try await start(.messaging, cluster: cluster, folder: folder, environment: messagingEnvironment)
        let gatewayPort = try await FreePort.next()
        var gatewayEnvironment = peers.merging(shared) { $1 }
        gatewayEnvironment["BAAS_PEER_MESSAGING_URL"] = "https://127.0.0.1:\(messagingPort)"
        gatewayEnvironment["BAAS_GATEWAY_HOST"] = "127.0.0.1"
        gatewayEnvironment["BAAS_GATEWAY_PORT"] = "\(gatewayPort)"
        gatewayEnvironment["BAAS_GATEWAY_INFO_DEADLINE_MS"] = "20000"
        let gateway: ServiceProcess
        do {
            gateway = try await start(.gateway, cluster: cluster, folder: folder, environment: gatewayEnvironment)
        } catch {
            await messaging.stop()
            throw error
        }
        let replica = ServiceReplica(
            gatewayURL: "http://127.0.0.1:\(gatewayPort)", folder: folder, cluster: cluster,
            messagingEnvironment: messagingEnvironment,
            messaging: messaging, gateway: gateway)
        do {
            let result = try await body(replica)
            await replica.stop()
            return result
        } catch {
            await replica.stop()
            throw error
        }
    }

    private static func start(
        _ service: ServiceName, cluster: TestCluster, folder: URL, environment: [String: String]
    ) async throws -> ServiceProcess {
        try await ServiceProcess.start(
            service, database: cluster.database, pkiDirectory: folder.appendingPathComponent("pki").path,
            log: folder.appendingPathComponent("\(service.executable).log"), environment: environment)
    }

    /// Stops the messaging-service as `docker stop` would (SIGTERM) and waits for it to exit.
    package func stopMessaging() async {
        await messaging.stop()
    }

    /// Stops the gateway as `docker stop` would (SIGTERM) and waits for it to exit (it is not
    /// started again).
    package func stopGateway() async {
        await gateway.stop()
    }

    /// Starts the messaging-service again, on the port the gateway knows.
    package func startMessaging() async throws {
        messaging = try await Self.start(
            .messaging, cluster: cluster, folder: folder, environment: messagingEnvironment)
    }

    /// The messaging-service's `/metrics` text.
    package func messagingMetrics() async throws -> String {
        try await HTTPTestClient.send(.GET, "http://127.0.0.1:\(messaging.opsPort)/metrics").text
    }

    /// The messaging-service's log so far (for a failing test's report).
    package func messagingLog() -> String {
        (try? String(contentsOf: folder.appendingPathComponent("messaging-service.log"), encoding: .utf8)) ?? ""
    }

    private func stop() async {
        await gateway.stop()
        await messaging.stop()
    }
}
